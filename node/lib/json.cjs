'use strict';
// JavaScript values as JSON text, every refusal named by its JSON path (as the Python binding's
// python/src/pyvalue.rs): JSON.stringify would write NaN and Infinity as null, drop a function
// member, write an undefined array item as null, a Map or a Set as {}, and throw a TypeError
// naming no place for a BigInt or a cycle. An object member whose value is `undefined` is
// absent, as JSON.stringify and every JavaScript API read it (LangChain.js's `toDict()` writes
// `artifact: undefined`); an `undefined` anywhere else is refused. Here each is refused with its path, before anything runs. Member
// order is the object's own (it is observable on the wire). Nesting is limited to the 128 levels
// docs/WIRE.md allows.

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

/** `value` as JSON text; throws a `Refusal` (path, reason) for what JSON cannot hold. */
function toJson(value) {
  const path = [];
  const open = new Set();
  const fail = (reason) => {
    throw new Refusal(render(path), reason);
  };
  const write = (v) => {
    if (v === null || typeof v === 'boolean' || typeof v === 'string') return JSON.stringify(v);
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) {
        const n = Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
        fail(`expected a finite number, got ${n}: JSON has no NaN or infinities (a wire value spells it {"f64": "${n}"})`);
      }
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
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        items.push(write(v[i]));
        path.pop();
      }
      out = `[${items.join(',')}]`;
    } else if (isPlainObject(v)) {
      const members = [];
      for (const k of Object.keys(v)) {
        if (v[k] === undefined) continue; // an absent member, as JSON.stringify reads it
        path.push(k);
        members.push(`${JSON.stringify(k)}:${write(v[k])}`);
        path.pop();
      }
      out = `{${members.join(',')}}`;
    } else {
      fail(`expected a JSON value (a plain object, array, string, number, boolean or null), got ${describe(v)}`);
    }
    open.delete(v);
    return out;
  };
  return write(value);
}

module.exports = { toJson, Refusal, MAX_DEPTH };
