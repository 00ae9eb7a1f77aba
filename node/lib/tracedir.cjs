'use strict';
// Where a TraceWriter made without a path writes: the trace directory of a test run with the
// hook (lib/test-hook.cjs), named by the environment variable HC_TRACE_DIR (as the Python
// package's pytest plugin names it), so every test process of the run records there.

const path = require('node:path');

const ENV = 'HC_TRACE_DIR';
const OWNER = 'HC_TRACE_OWNER';
let counter = 0;

/** A fresh file in the trace directory, or null when there is none. */
function newPath() {
  const dir = process.env[ENV];
  if (!dir) return null;
  counter += 1;
  return path.join(dir, `${process.pid}-${counter}.jsonl`);
}

module.exports = { ENV, OWNER, newPath };
