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
const { ROOT } = require('./repo.cjs');

const project = path.join(__dirname, 'fixtures', 'vitest');
const vitest = path.join(path.dirname(require.resolve('vitest/package.json')), 'vitest.mjs');

function runVitest(orphan, root = project) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hc-vitest-'));
  const env = { ...process.env, ORPHAN: orphan ? '1' : '0', HC_TRACE_DIR: dir, CI: '1' };
  delete env.HC_TRACE_OWNER;
  delete env.NODE_TEST_CONTEXT;
  const r = spawnSync(process.execPath, [vitest, 'run', '--root', root, '--cache=false'], { encoding: 'utf8', env, cwd: root });
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

test('docs/CI.md\'s vitest config and test file, as a project: it passes, its trace checked', () => {
  const page = fs.readFileSync(path.join(ROOT, 'docs', 'CI.md'), 'utf8');
  const section = page.slice(page.indexOf('## TypeScript and Node'), page.indexOf('\n## ', page.indexOf('## TypeScript and Node') + 3));
  const files = [...section.matchAll(/```ts\n\/\/ ([\w.]+)[^\n]*\n([\s\S]*?)```/g)].map((m) => [m[1], m[2]]);
  assert.deepEqual(files.map(([name]) => name), ['vitest.config.ts', 'agent.test.ts']);
  // beside the fixtures, so that vitest and the package resolve as they do for them
  const root = fs.mkdtempSync(path.join(__dirname, 'fixtures', 'vitest-docs-'));
  try {
    for (const [name, text] of files) fs.writeFileSync(path.join(root, name), text);
    const r = runVitest(false, root);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stderr, /1 trace\(s\), 1 call\(s\) checked .*: 0 violation\(s\)/);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
