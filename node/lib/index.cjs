'use strict';
// hybrid-compaction for Node: the conformance oracle of hybrid context compaction (ADR-0007).
//
// The library and the oracle run inside this process through a native addon (napi-rs,
// node/src/): no subprocess, no Rust toolchain. Every answer comes from the library: this layer
// only writes a JavaScript value as JSON text (lib/json.cjs, refusing what JSON cannot hold, by
// path), hands it to the addon, parses the answer and throws the package's errors
// (lib/errors.cjs). Results are plain objects in the wire format of docs/WIRE.md. See
// docs/NODE.md.

const native = require('../native/index.cjs');
const errors = require('./errors.cjs');
const { toJson, Refusal } = require('./json.cjs');

const { InvalidCaseError, SpecError, unwrap } = errors;

/** The two implementations of the SPEC: the executable specification and the engine. */
const IMPLEMENTATIONS = Object.freeze(['model', 'engine']);

/** The transcript formats (SPEC TRN-1). */
const TRANSCRIPT_FORMATS = Object.freeze(['openai-chat', 'anthropic-messages', 'langchain', 'openai-responses', 'ai-sdk']);

function requireImplementation(implementation) {
  if (!IMPLEMENTATIONS.includes(implementation)) {
    throw new TypeError(`implementation must be "model" or "engine", got ${JSON.stringify(implementation)}`);
  }
}

function requireArray(value, name) {
  if (!Array.isArray(value)) {
    throw new TypeError(`${name} must be an array, got ${value === null ? 'null' : typeof value}`);
  }
}

function requirePolicy(policy) {
  if (policy === null || typeof policy !== 'object' || Array.isArray(policy)) {
    throw new TypeError(`policy must be a policy object (build one with policy({...})), got ${policy === null ? 'null' : typeof policy}`);
  }
}

/** JSON text of `value`, or InvalidCaseError at the offending value's path. */
function jsonText(value) {
  try {
    return toJson(value);
  } catch (e) {
    if (e instanceof Refusal) throw new InvalidCaseError(e.path, e.reason);
    throw e;
  }
}

/**
 * Runs one wire case on `implementation` ("engine", the default, or "model"). `c` is a case
 * object or its JSON text (text keeps what a JavaScript number cannot: `1.0` as a float).
 * Returns the output exactly as `hybrid-compaction run` prints it (a typed error is an answer:
 * `{error: {...}}`); throws InvalidCaseError for invalid input and InternalError if an
 * implementation fails.
 */
function run(c, implementation = 'engine') {
  requireImplementation(implementation);
  let text;
  if (typeof c === 'string') text = c;
  else if (c !== null && typeof c === 'object' && !Array.isArray(c)) text = jsonText(c);
  else throw new InvalidCaseError('$', `expected an object with \`op\`, got ${c === null ? 'null' : Array.isArray(c) ? 'an array' : typeof c}`);
  return unwrap(native.runCase(text, implementation));
}

function answerOf(output, member) {
  if ('error' in output) throw new SpecError(output.error);
  return output[member];
}

function estimatorObject(estimator) {
  if (typeof estimator === 'string') {
    const [kind, encoding] = estimator.split(':', 2);
    return kind === 'tokens' && encoding ? { kind: 'tokens', encoding } : { kind: estimator };
  }
  if (estimator !== null && typeof estimator === 'object' && !Array.isArray(estimator)) return { ...estimator };
  throw new TypeError(`estimator must be a name or an object, got ${estimator === null ? 'null' : typeof estimator}`);
}

const POLICY_FIELDS = ['hardLimit', 'triggerMargin', 'recentMessageRetentionCount', 'maximumCompactionAttempts', 'preservationLabel', 'preservationVersion'];

/**
 * A wire policy (SPEC POL-1). Every number is required: the SPEC has no defaults. `estimator`
 * is a name as the CLI spells it ("utf8", the default; "utf8-text"; "tokens:o200k_base",
 * "tokens:cl100k_base") or a whole estimator object. Values are validated when a case runs
 * (POL-2); a missing member is a TypeError here.
 */
function policy(options) {
  if (options === null || typeof options !== 'object') throw new TypeError('policy takes an object of its members');
  const out = {};
  for (const f of POLICY_FIELDS) {
    if (!(f in options)) throw new TypeError(`policy: ${f} is required (the SPEC has no defaults)`);
    out[f] = options[f];
  }
  const unknown = Object.keys(options).filter((k) => k !== 'estimator' && !POLICY_FIELDS.includes(k));
  if (unknown.length) throw new TypeError(`policy: unknown member ${JSON.stringify(unknown[0])}`);
  out.estimator = estimatorObject(options.estimator ?? 'utf8');
  return out;
}

/**
 * Verify(original, proposed) (SPEC VER-1): is `proposed` an acceptable compaction? `original`
 * is an array of wire entries (the converters make them); each `proposed` item is the id of an
 * original entry or a whole entry. Returns the `verification` object; throws SpecError for a
 * typed error.
 */
function verify(original, proposed, policy, { implementation = 'engine' } = {}) {
  requireArray(original, 'original');
  requireArray(proposed, 'proposed');
  requirePolicy(policy);
  return answerOf(run({ op: 'verify', policy, original, proposed }, implementation), 'verification');
}

/** Trigger evaluation (SPEC POL-3): the estimated size of `entries` against the policy. */
function evaluate(entries, policy, { implementation = 'engine' } = {}) {
  requireArray(entries, 'entries');
  requirePolicy(policy);
  return answerOf(run({ op: 'evaluate', policy, entries }, implementation), 'evaluation');
}

/**
 * Checks a recorded trace (docs/TRACE.md): every call replayed through `implementation`
 * ("model", the default, as `hybrid-compaction check` does, or "engine") and every TRC
 * invariant of the SPEC checked. `trace` is the JSON Lines text (a string whose first
 * non-blank character is `{`), an array of its records (header first), or the path of a trace
 * file (any other string, or a `file:` URL), read in blocks, never whole. Returns the report
 * `hybrid-compaction check --json` prints; a conformant trace has no `violations`.
 */
function check(trace, { implementation = 'model' } = {}) {
  requireImplementation(implementation);
  if (trace instanceof URL) trace = require('node:url').fileURLToPath(trace);
  if (Array.isArray(trace)) {
    const lines = trace.map((r, i) => {
      try {
        return toJson(r);
      } catch (e) {
        if (e instanceof Refusal) throw new InvalidCaseError(`$[${i}]${e.path.slice(1)}`, e.reason);
        throw e;
      }
    });
    return unwrap(native.checkText(lines.map((l) => `${l}\n`).join(''), implementation));
  }
  if (typeof trace !== 'string') {
    throw new TypeError(`trace must be JSON Lines text, an array of records or a file path, got ${trace === null ? 'null' : typeof trace}`);
  }
  if (/^\s*(\{|$)/.test(trace)) return unwrap(native.checkText(trace, implementation));
  return unwrap(native.checkFile(trace, implementation));
}

/**
 * The JSON Schemas (draft 2020-12) of the wire format, as `hybrid-compaction schema`: no
 * argument for `{case, output, vectorFile}`, or one of "case", "output", "vector-file",
 * "trace".
 */
function schema(which) {
  const text = native.schemaJson(which ?? null);
  if (text === null) {
    throw new TypeError(`which must be undefined, "case", "output", "vector-file" or "trace", got ${JSON.stringify(which)}`);
  }
  return JSON.parse(text);
}

/**
 * The BPE token count of each text with `encoding` ("o200k_base", the default, or
 * "cl100k_base"): the ranks the token estimator uses (SPEC EST-6), bundled, no network.
 */
function countTokens(texts, encoding = 'o200k_base') {
  requireArray(texts, 'texts');
  texts.forEach((t, i) => {
    if (typeof t !== 'string') throw new TypeError(`texts[${i}] must be a string, got ${t === null ? 'null' : typeof t}`);
  });
  const counts = native.countTokens(texts, encoding);
  if (counts === null) throw new TypeError(`encoding must be "o200k_base" or "cl100k_base", got ${JSON.stringify(encoding)}`);
  return counts;
}

/**
 * A seeded agent conversation of exactly `messages` messages as a transcript object, as
 * `hybrid-compaction workload` writes it.
 */
function workload(messages, { seed = 1, format = 'openai-chat', ending } = {}) {
  if (!Number.isSafeInteger(messages) || messages < 0 || messages > 0xffffffff) {
    throw new InvalidCaseError('messages', `expected a whole number, got ${String(messages)}`);
  }
  if (!Number.isSafeInteger(seed) || seed < 0) throw new InvalidCaseError('seed', `expected a whole number from 0, got ${String(seed)}`);
  return unwrap(native.workloadJson(messages, seed, format, ending ?? null));
}

const convert = require('./convert.cjs')(native, jsonText);
const tracing = require('./trace.cjs')(native, jsonText, requirePolicy);
const compaction = require('./compact.cjs')(native, jsonText, estimatorObject, requirePolicy, tracing);

const { unwrap: _unwrap, unwrapValue: _unwrapValue, ...publicErrors } = errors;

module.exports = {
  ...publicErrors,
  IMPLEMENTATIONS,
  TRANSCRIPT_FORMATS,
  version: native.version(),
  run,
  policy,
  verify,
  evaluate,
  check,
  schema,
  countTokens,
  workload,
  ...convert,
  ...compaction,
  TraceWriter: tracing.TraceWriter,
  TraceWriteError: tracing.TraceWriteError,
};
