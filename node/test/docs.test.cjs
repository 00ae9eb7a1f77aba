'use strict';
// Every `js` example of docs/NODE.md runs, in a process of its own, from the repository root
// (the examples name repository files such as docs/trace-example.jsonl), with the installed
// package resolvable as `hybrid-compaction`; an example asserts its own results.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { ROOT } = require('./repo.cjs');

const DOC = path.join(ROOT, 'docs', 'NODE.md');
const EXAMPLES = [...fs.readFileSync(DOC, 'utf8').matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);

// A folder holding `hybrid-compaction` (a link to the package under test) and `ai`, for NODE_PATH.
const modules = fs.mkdtempSync(path.join(os.tmpdir(), 'hc-docs-'));
fs.symlinkSync(path.dirname(require.resolve('hybrid-compaction/package.json')), path.join(modules, 'hybrid-compaction'));
// The AI SDK (a dev dependency) for the examples of hybrid-compaction/ai-sdk.
fs.symlinkSync(path.dirname(require.resolve('ai/package.json')), path.join(modules, 'ai'));

test('docs/NODE.md has its examples', () => {
  assert.ok(EXAMPLES.length >= 4, `${EXAMPLES.length} examples`);
});

EXAMPLES.forEach((code, i) => {
  test(`docs/NODE.md example ${i + 1}`, () => {
    const r = spawnSync(process.execPath, ['-e', code], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, NODE_PATH: modules },
    });
    assert.equal(r.status, 0, `example ${i + 1}:\n${code}\n${r.stderr}`);
  });
});
