'use strict';
// JavaScript values as JSON text, every refusal named by its JSON path (as the Python binding's
// python/src/pyvalue.rs): JSON.stringify would write NaN and Infinity as null, drop a function
// member, write an undefined array item as null, a Map or a Set as {}, and throw a TypeError
// naming no place for a BigInt or a cycle. An object member whose value is `undefined` is
// absent, as JSON.stringify and every JavaScript API read it (LangChain.js's `toDict()` writes
// `artifact: undefined`); an `undefined` anywhere else is refused. Here each is refused with its path, before anything runs. Member
// order is the object's own (it is observable on the wire). Nesting is limited to the 128 levels
// docs/WIRE.md allows.
//
// A witness (docs/NODE.md, "Repeat calls"): `toJson(value, witness)` also records, in `witness`,
// everything it read, in order: each primitive written, each array as ARRAY and its length, each
// plain object as OBJECT, its written keys each followed by its value, then END. The JSON text
// is a function of that sequence alone, so `unchanged(value, witness)` (the same reads, compared
// with Object.is) proves `toJson(value)` would write the same text, without writing it.

const MAX_DEPTH = 128;

class Refusal {
  constructor(path, reason) {
    this.path = path;
    this.reason = reason;
  }
}

const PLAIN = /^[A-Za-z_][A-Za-z0-9_]*$/;

function render(segments) {
  let out = '$';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (PLAIN.test(s)) out += `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}

function describe(v) {
  if (v === undefined) return 'undefined';
  if (typeof v === 'bigint') return `the BigInt ${v}n`;
  if (typeof v === 'function') return 'a function';
  if (typeof v === 'symbol') return 'a symbol';
  const name = v && v.constructor && v.constructor.name;
  return name ? `a ${name}` : 'an object without a prototype';
}

function isPlainObject(v) {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

const ARRAY = Object.freeze({ witness: 'array' });
const OBJECT = Object.freeze({ witness: 'object' });
const END = Object.freeze({ witness: 'end' });

// The walk that checks a value and records its witness without writing text (`witnessed`), so
// that the text itself is the engine's own JSON.stringify: what the walk accepts, JSON.stringify
// writes exactly as `write` below would (own keys in order, `undefined` members absent, numbers
// and strings as JSON.stringify writes them), three to four times faster than building it here.
// What the walk refuses, `write` refuses again with its path. (A getter is read twice, by the
// walk and by JSON.stringify: one answering differently each time is not a JSON value anyway.)
const scratch = [];

/** Whether `value` is JSON as `toJson` takes it; records its witness in `witness` (a fresh
 * array) when it is. Never throws; module-level recursion, no closure per call. */
function witnessed(value, witness) {
  const open = new Set();
  return check(value, 0, witness, open);
}

function check(v, depth, witness, open) {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') {
    witness.push(v);
    return true;
  }
  if (typeof v === 'number') {
    witness.push(v);
    return Number.isFinite(v);
  }
  if (typeof v !== 'object' || depth + 1 >= MAX_DEPTH || open.has(v)) return false;
  open.add(v);
  if (Array.isArray(v)) {
    witness.push(ARRAY, v.length);
    for (let i = 0; i < v.length; i++) if (!check(v[i], depth + 1, witness, open)) return false;
  } else if (isPlainObject(v)) {
    witness.push(OBJECT);
    for (const k of Object.keys(v)) {
      const x = v[k];
      if (x === undefined) continue;
      witness.push(k);
      if (!check(x, depth + 1, witness, open)) return false;
    }
    witness.push(END);
  } else {
    return false;
  }
  open.delete(v);
  return true;
}

/** `value` as JSON text; throws a `Refusal` (path, reason) for what JSON cannot hold. With a
 * `witness` array, records what it read there (see the module comment). */
function toJson(value, witness) {
  const w = witness ?? scratch;
  const start = w.length;
  const ok = witnessed(value, w);
  if (witness === undefined) scratch.length = 0;
  if (ok) return JSON.stringify(value);
  if (witness !== undefined) witness.length = start;
  return written(value, witness);
}

/** `toJson`'s own writer: the refusal of a value the walk refused, with its path. */
function written(value, witness) {
  const path = [];
  const open = new Set();
  const fail = (reason) => {
    throw new Refusal(render(path), reason);
  };
  const write = (v) => {
    if (v === null || typeof v === 'boolean' || typeof v === 'string') {
      if (witness !== undefined) witness.push(v);
      return JSON.stringify(v);
    }
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) {
        const n = Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
        fail(`expected a finite number, got ${n}: JSON has no NaN or infinities (a wire value spells it {"f64": "${n}"})`);
      }
      if (witness !== undefined) witness.push(v);
      return JSON.stringify(v);
    }
    if (typeof v !== 'object') {
      fail(`expected a JSON value (an object, array, string, number, boolean or null), got ${describe(v)}`);
    }
    if (path.length + 1 >= MAX_DEPTH) fail(`nested deeper than ${MAX_DEPTH} levels`);
    if (open.has(v)) fail('a cycle: this value contains itself');
    open.add(v);
    let out;
    if (Array.isArray(v)) {
      const items = [];
      if (witness !== undefined) witness.push(ARRAY, v.length);
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        items.push(write(v[i]));
        path.pop();
      }
      out = `[${items.join(',')}]`;
    } else if (isPlainObject(v)) {
      const members = [];
      if (witness !== undefined) witness.push(OBJECT);
      for (const k of Object.keys(v)) {
        const x = v[k]; // read once: what is written is what the witness holds
        if (x === undefined) continue; // an absent member, as JSON.stringify reads it
        if (witness !== undefined) witness.push(k);
        path.push(k);
        members.push(`${JSON.stringify(k)}:${write(x)}`);
        path.pop();
      }
      if (witness !== undefined) witness.push(END);
      out = `{${members.join(',')}}`;
    } else {
      fail(`expected a JSON value (a plain object, array, string, number, boolean or null), got ${describe(v)}`);
    }
    open.delete(v);
    return out;
  };
  return write(value);
}

// The witness being compared and the position in it (`unchanged` is not reentrant: it calls
// no user code but getters, and a walk is never nested in another).
let seen = null;
let at = 0;

/** `unchanged`'s walk of one value at `depth` (module-level, so no closure is made per call). */
function same(v, depth) {
  if (at >= seen.length) return false;
  if (v === null || typeof v !== 'object') return Object.is(v, seen[at++]);
  if (depth + 1 >= MAX_DEPTH) return false;
  if (Array.isArray(v)) {
    if (seen[at] !== ARRAY || seen[at + 1] !== v.length) return false;
    at += 2;
    for (let i = 0; i < v.length; i++) if (!same(v[i], depth + 1)) return false;
    return true;
  }
  if (seen[at] !== OBJECT || !isPlainObject(v)) return false;
  at += 1;
  for (const k of Object.keys(v)) {
    const x = v[k];
    if (x === undefined) continue;
    if (seen[at] !== k) return false;
    at += 1;
    if (!same(x, depth + 1)) return false;
  }
  return seen[at++] === END;
}

/** Whether `toJson(value)` reads exactly what `witness` recorded (so writes the same text): the
 * same reads, in order, each primitive the same (Object.is), each container of the same kind
 * with the same length or keys. Reads no more than the witness holds (a cycle ends it). */
function unchanged(value, witness) {
  seen = witness;
  at = 0;
  try {
    return same(value, 0) && at === witness.length;
  } finally {
    seen = null;
  }
}

module.exports = { toJson, witnessed, unchanged, Refusal, MAX_DEPTH, _written: written };
