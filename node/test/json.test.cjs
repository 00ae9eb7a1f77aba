'use strict';
// The JSON writer (lib/json.cjs): its fast path (a checking walk that records the witness, then
// the engine's JSON.stringify) writes exactly what its own writer writes, records the same
// witness, and leaves every refusal, with its path, to that writer. Seeded random values,
// valid and not (NaN, undefined items, functions, BigInts, class instances, cycles, deep nests).
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

// The writer is internal (not an export of the package): required by its file in the installed
// package (CI runs these tests from the packed tarball).
const lib = path.join(path.dirname(require.resolve('hybrid-compaction/package.json')), 'lib');
const { toJson, witnessed, unchanged, Refusal, _written } = require(path.join(lib, 'json.cjs'));

function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ODD = [NaN, Infinity, undefined, () => 1, 10n, new Date(0), new Map(), Symbol('s')];

function value(r, depth) {
  const k = Math.floor(r() * (depth > 4 ? 5 : 8));
  switch (k) {
    case 0: return null;
    case 1: return r() < 0.5;
    case 2: return ['', 'über', '"\\\n', '上下文 🚀', 'x'.repeat(3)][Math.floor(r() * 5)];
    case 3: return [0, -0, 1.5, -2, 2 ** 60, 1e-7][Math.floor(r() * 6)];
    case 4: return r() < 0.1 ? ODD[Math.floor(r() * ODD.length)] : 'plain';
    case 5: return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1));
    default: {
      const o = {};
      for (let i = Math.floor(r() * 4); i > 0; i--) o[['a', 'b', 'role', 'ü', '1'][Math.floor(r() * 5)]] = r() < 0.1 ? undefined : value(r, depth + 1);
      return o;
    }
  }
}

function outcome(write, v) {
  const witness = [];
  try {
    return { text: write(v, witness), witness };
  } catch (e) {
    assert.ok(e instanceof Refusal, String(e));
    return { refused: [e.path, e.reason] };
  }
}

test('the fast writer writes, records and refuses exactly as the path writer does', () => {
  const r = random(7);
  let refused = 0;
  for (let i = 0; i < 3000; i++) {
    const v = value(r, 0);
    if (i % 97 === 0 && v !== null && typeof v === 'object') v.self = v; // a cycle
    const fast = outcome(toJson, v);
    assert.deepEqual(fast, outcome(_written, v));
    if (fast.refused) refused += 1;
    else assert.ok(unchanged(v, fast.witness));
    assert.equal(witnessed(v, []), fast.refused === undefined);
  }
  assert.ok(refused > 50 && refused < 2000, `${refused} refused`);
});

test('nesting: the depth limit is the same on both paths', () => {
  let deep = 1;
  for (let i = 0; i < 200; i++) deep = [deep];
  assert.deepEqual(outcome(toJson, deep), outcome(_written, deep));
  assert.ok(outcome(toJson, deep).refused);
});
