'use strict';
// The test-runner hook: traces written during a `node --test` run are checked when it ends, and
// the run fails on a violation, naming its clause.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const fixture = path.join(__dirname, 'fixtures', 'agent.fixture.cjs');

function runWithHook(orphan) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hc-hook-'));
  const env = { ...process.env, ORPHAN: orphan ? '1' : '0', HC_TRACE_DIR: dir };
  delete env.HC_TRACE_OWNER;
  delete env.NODE_TEST_CONTEXT; // a run of its own, not a subtest of this one
  const r = spawnSync(process.execPath, ['--test', '--require', 'hybrid-compaction/test-hook', fixture], { encoding: 'utf8', env, cwd: path.resolve(__dirname, '..') });
  return { ...r, files: fs.readdirSync(dir) };
}

test('a clean run passes, its traces checked', () => {
  const r = runWithHook(false);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.files.length, 1);
  assert.match(r.stderr, /1 trace\(s\), 2 call\(s\) checked .*: 0 violation\(s\)/);
});

test('a run whose agent orphans a tool result fails, naming the clause', () => {
  const r = runWithHook(true);
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /TRC-3 in .*call model-2/);
  assert.match(r.stdout, /# pass 1/, 'the test itself passed: the hook failed the run');
});

test('a TraceWriter without a path outside such a run is refused', () => {
  const hc = require('hybrid-compaction');
  const saved = process.env.HC_TRACE_DIR;
  delete process.env.HC_TRACE_DIR;
  try {
    assert.throws(() => new hc.TraceWriter(), { name: 'TraceWriteError', path: 'hc-trace' });
  } finally {
    if (saved !== undefined) process.env.HC_TRACE_DIR = saved;
  }
});
