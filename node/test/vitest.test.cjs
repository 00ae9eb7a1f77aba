'use strict';
// The vitest hook (hybrid-compaction/vitest, a globalSetup): traces written during a vitest run
// are checked when it ends, and the run fails on a violation, naming its clause; as
// test/hook.test.cjs does for `node --test`. Runs the pinned vitest (node/test-harness) on the
// project test/fixtures/vitest (a TypeScript test file).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const project = path.join(__dirname, 'fixtures', 'vitest');
const vitest = path.join(path.dirname(require.resolve('vitest/package.json')), 'vitest.mjs');

function runVitest(orphan) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hc-vitest-'));
  const env = { ...process.env, ORPHAN: orphan ? '1' : '0', HC_TRACE_DIR: dir, CI: '1' };
  delete env.HC_TRACE_OWNER;
  delete env.NODE_TEST_CONTEXT;
  const r = spawnSync(process.execPath, [vitest, 'run', '--root', project, '--cache=false'], { encoding: 'utf8', env, cwd: project });
  return { ...r, files: fs.readdirSync(dir) };
}

test('a clean vitest run passes, its traces checked', () => {
  const r = runVitest(false);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.files.length, 1);
  assert.match(r.stderr, /1 trace\(s\), 2 call\(s\) checked .*: 0 violation\(s\)/);
});

test('a vitest run whose agent orphans a tool result fails, naming the clause', () => {
  const r = runVitest(true);
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /TRC-3 in .*call model-2/);
  assert.match(r.stdout, /1 passed/, 'the test itself passed: the hook failed the run');
});
