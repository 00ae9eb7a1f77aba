'use strict';
// hybrid-compaction/vitest: the test-runner hook for vitest, as a `globalSetup` module
// (`test: {globalSetup: ['hybrid-compaction/vitest']}` in vitest.config). vitest runs a
// globalSetup's `setup` in its main process before it starts the test workers, and its
// `teardown` there when the run closes (a setup file would run in every worker instead). So
// `setup` makes the run's trace directory (HC_TRACE_DIR, kept if already set), which every
// worker inherits: a `new TraceWriter()` without a path writes a file of its own there; and
// `teardown` checks every trace in it (SPEC TRC, the library's checker) and fails the run (exit
// code 1) on a violation, each printed with its clause, run, call and file, as the `node --test`
// hook (lib/test-hook.cjs) and `pytest --hc-trace` do.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ENV, OWNER, checkDirectory } = require('./tracedir.cjs');

let owned = null;

/** Makes the run's trace directory (unless an outer run owns one). */
function setup() {
  if (process.env[OWNER]) return;
  const dir = process.env[ENV] || fs.mkdtempSync(path.join(os.tmpdir(), 'hc-trace-'));
  fs.mkdirSync(dir, { recursive: true });
  process.env[ENV] = dir;
  process.env[OWNER] = String(process.pid);
  owned = dir;
}

/** Checks every trace of the run; a violation fails it (exit code 1). */
function teardown() {
  if (owned === null) return;
  const dir = owned;
  owned = null;
  if (checkDirectory(dir) > 0) process.exitCode = 1;
}

module.exports = { setup, teardown };
