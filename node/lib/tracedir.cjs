'use strict';
// Where a TraceWriter made without a path writes: the trace directory of a test run with the
// hook (lib/test-hook.cjs), named by the environment variable HC_TRACE_DIR (as the Python
// package's pytest plugin names it), so every test process of the run records there; and the
// check of that directory when the run ends (the node --test hook and the vitest globalSetup).

const fs = require('node:fs');
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

/** Checks every trace (`*.jsonl`) in `dir` (SPEC TRC, the library's checker), printing each
 * violation with its clause, run, call and file, and a summary line, on stderr; answers the
 * number of violations (an unreadable trace counts as one). */
function checkDirectory(dir) {
  const hc = require('./index.cjs');
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort() : [];
  let violations = 0;
  let calls = 0;
  for (const f of files) {
    const file = path.join(dir, f);
    let report;
    try {
      report = hc.check(file);
    } catch (e) {
      process.stderr.write(`hybrid-compaction: ${file}: unreadable trace: ${e.message}\n`);
      violations += 1;
      continue;
    }
    calls += report.calls;
    for (const v of report.violations) {
      violations += 1;
      process.stderr.write(`hybrid-compaction: ${v.clause} in ${file}, run ${v.run}, call ${v.call}: ${v.explanation ?? v.message ?? ''}\n`);
    }
  }
  process.stderr.write(`hybrid-compaction: ${files.length} trace(s), ${calls} call(s) checked in ${dir}: ${violations} violation(s)\n`);
  return violations;
}

module.exports = { ENV, OWNER, newPath, checkDirectory };
