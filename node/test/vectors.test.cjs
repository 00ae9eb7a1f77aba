'use strict';
// The whole vector corpus through `run` from Node, on the model and on the engine: every case
// of every published file (its group's policy applied by the oracle's loader) as JSON text,
// its output compared with the expected one (member order and error.message ignored; a
// JavaScript number cannot tell 1 from 1.0, so the type-exact comparison is the command's,
// run below through the package's bin). A missing or truncated corpus is a failure.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const hc = require('hybrid-compaction');
const native = require('hybrid-compaction/native');
const { ROOT, firstDifference } = require('./repo.cjs');

const DIR = path.join(ROOT, 'vectors');
const FILES = fs.readdirSync(DIR).filter((f) => f.endsWith('.json')).sort();

function load(file) {
  return JSON.parse(native.vectorFileCases(path.join(DIR, file))).ok;
}

// The corpus size docs/WIRE.md states ("<n> vectors: ..."), which the repository's tests keep true.
const DOCUMENTED = Number(
  /^(\d+) vectors: /m.exec(fs.readFileSync(path.join(ROOT, 'docs', 'WIRE.md'), 'utf8'))[1]);

test('the corpus is all there (as many vectors as docs/WIRE.md says)', () => {
  const count = FILES.reduce((n, f) => n + load(f).length, 0);
  assert.ok(DOCUMENTED > 900, `docs/WIRE.md states ${DOCUMENTED}`);
  assert.equal(count, DOCUMENTED);
});

for (const file of FILES) {
  test(`vectors/${file} on the model and the engine`, () => {
    for (const v of load(file)) {
      for (const imp of hc.IMPLEMENTATIONS) {
        const d = firstDifference(v.expected, hc.run(v.case, imp));
        assert.equal(d, null, `tcId ${v.tcId} (${file}) on the ${imp}: ${d}`);
      }
    }
  });
}

test('a wrong expectation is caught', () => {
  const v = load('verify.json').find((x) => x.expected.verification);
  const wrong = { verification: { ...v.expected.verification, outcome: 'Nope' } };
  assert.match(firstDifference(wrong, hc.run(v.case)), /^\$\.verification\.outcome: expected "Nope"/);
});

test('the command in the package runs the corpus type-exactly', () => {
  const bin = require.resolve('hybrid-compaction/bin/hybrid-compaction.cjs');
  const r = spawnSync(process.execPath, [bin, 'vectors', DIR], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr + r.stdout);
  assert.match(r.stdout, new RegExp(`${DOCUMENTED} vectors x 2 implementation\\(s\\) in [0-9.]+m?s: all passed`));
});
