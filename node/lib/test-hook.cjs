'use strict';
// The test-runner hook: `node --test --require hybrid-compaction/test-hook` (or `--import`). The
// first process that loads it (the
// test runner) makes a trace directory (HC_TRACE_DIR, kept if already set), which every test
// process inherits: a `new TraceWriter()` without a path writes a file of its own there. When
// the runner exits, every trace in the directory is checked (SPEC TRC, the library's checker)
// and the run fails (exit code 1) on a violation, each printed with its clause, run, call and
// file, as `pytest --hc-trace` does. (vitest: `hybrid-compaction/vitest`, lib/vitest.cjs.)

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ENV, OWNER, checkDirectory } = require('./tracedir.cjs');

if (!process.env[OWNER]) {
  const dir = process.env[ENV] || fs.mkdtempSync(path.join(os.tmpdir(), 'hc-trace-'));
  fs.mkdirSync(dir, { recursive: true });
  process.env[ENV] = dir;
  process.env[OWNER] = String(process.pid);
  process.on('exit', () => {
    if (checkDirectory(dir) > 0) process.exitCode = 1;
  });
}

module.exports = { checkDirectory };
