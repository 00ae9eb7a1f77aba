'use strict';
// The package's TypeScript types compile for a user: tsc --strict (module nodenext) on
// test/fixtures/types.fixture.ts, importing the installed package by name; a wrong use is a
// type error.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const tsc = require.resolve('typescript/bin/tsc');
const fixture = path.join(__dirname, 'fixtures', 'types.fixture.ts');

function typecheck(file) {
  return spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', file], { encoding: 'utf8', cwd: path.resolve(__dirname, '..') });
}

test('the types compile for a TypeScript user', () => {
  const r = typecheck(fixture);
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('a wrong use is a type error', () => {
  const wrong = path.join(path.dirname(fixture), 'wrong.fixture.ts');
  fs.writeFileSync(wrong, "import * as hc from 'hybrid-compaction';\nconst n: number = hc.verify([], [], hc.policy({ hardLimit: 1 }));\n");
  try {
    const r = typecheck(wrong);
    assert.notEqual(r.status, 0);
    assert.match(r.stdout, /wrong\.fixture\.ts.*error TS/);
  } finally {
    fs.unlinkSync(wrong);
  }
});
