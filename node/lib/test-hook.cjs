'use strict';
// The test-runner hook: `node --test --require hybrid-compaction/test-hook` (or `--import`). The
// first process that loads it (the
// test runner) makes a trace directory (HC_TRACE_DIR, kept if already set), which every test
// process inherits: a `new TraceWriter()` without a path writes a file of its own there. When
// the runner exits, every trace in the directory is checked (SPEC TRC, the library's checker)
// and the run fails (exit code 1) on a violation, each printed with its clause, run, call and
// file, as `pytest --hc-trace` does.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ENV, OWNER } = require('./tracedir.cjs');

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
