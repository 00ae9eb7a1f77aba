'use strict';
// Where the repository is: HYBRID_COMPACTION_REPO (CI runs these tests from a fresh directory
// holding the installed package), else two levels above this file (node/test/ in a clone).
const path = require('node:path');

const ROOT = process.env.HYBRID_COMPACTION_REPO || path.resolve(__dirname, '..', '..');

/** `null` if `actual` matches `expected` (member order and error.message ignored), else the
 * first difference as "$.path: expected X, got Y". */
function firstDifference(expected, actual, at = '$') {
  const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (isObj(expected) && isObj(actual)) {
    for (const k of Object.keys(expected)) {
      if (at.endsWith('.error') && k === 'message') continue;
      if (!(k in actual)) return `${at}.${k}: expected ${JSON.stringify(expected[k])}, got nothing`;
      const d = firstDifference(expected[k], actual[k], `${at}.${k}`);
      if (d) return d;
    }
    for (const k of Object.keys(actual)) {
      if (at.endsWith('.error') && k === 'message') continue;
      if (!(k in expected)) return `${at}.${k}: expected nothing, got ${JSON.stringify(actual[k])}`;
    }
    return null;
  }
  if (Array.isArray(expected) && Array.isArray(actual) && expected.length === actual.length) {
    for (let i = 0; i < expected.length; i++) {
      const d = firstDifference(expected[i], actual[i], `${at}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  return Object.is(expected, actual) ? null : `${at}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

module.exports = { ROOT, firstDifference };
