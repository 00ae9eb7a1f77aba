'use strict';
// The package's errors, as JavaScript `Error` subclasses with the fields the Python package's
// exceptions carry (python/hybrid_compaction/_errors.py): `path` and `reason` of invalid input,
// `kind`, `path` and `reason` of a converter's refusal, the typed SPEC error's `kind`, `field`
// and `entryId`. The native module answers a JSON envelope (node/src/answer.rs); `unwrap` throws
// the class its one member names, with its fields, and parses nothing else.

/** Base class of every error this package throws. */
class HybridCompactionError extends Error {
  constructor(message) {
    super(message);
    this.name = new.target.name;
  }
}

/** Not valid wire input (the CLI's exit 2): `path` (a JSON path, `line N` of a trace, or an
 * argument's name) and `reason`. */
class InvalidCaseError extends HybridCompactionError {
  constructor(path, reason) {
    super(`${path}: ${reason}`);
    this.path = path;
    this.reason = reason;
  }
}

/** An implementation failed internally (a bug; the CLI's exit 1). */
class InternalError extends HybridCompactionError {
  constructor(implementation, reason) {
    super(`internal failure of the ${implementation}: ${reason}`);
    this.implementation = implementation;
    this.reason = reason;
  }
}

/** The SPEC rejects the input: a typed error answer (`kind`, `field`?, `entryId`?, `answer`). */
class SpecError extends HybridCompactionError {
  constructor(answer) {
    const named = answer.field || answer.entryId;
    super(`${answer.kind}${named ? ` (${named})` : ''}: ${answer.message}`);
    this.answer = answer;
    this.kind = answer.kind;
    this.field = answer.field ?? null;
    this.entryId = answer.entryId ?? null;
  }
}

/** A transcript the converters cannot map (SPEC TRN): `kind` (ERR-1), `path`, `reason`. */
class TranscriptError extends HybridCompactionError {
  constructor(kind, path, reason) {
    super(path ? `${path}: ${reason}` : reason);
    this.kind = kind;
    this.path = path;
    this.reason = reason;
  }
}

/** Content the closed content model cannot hold (kind `NotSupported`). */
class UnsupportedContentError extends TranscriptError {}

/** Compaction terminated (SPEC NODE-4): nothing may be sent. `outcome` (`Irreducible` or
 * `ConcurrentMutationLimit`), `finalSize` and `hardLimit` in the policy's unit. */
class CompactionTerminated extends HybridCompactionError {
  constructor(outcome, finalSize, hardLimit) {
    super(`context compaction terminated (${outcome}): final estimated size ${finalSize} exceeds what can be sent within hard limit ${hardLimit}`);
    this.outcome = outcome;
    this.finalSize = finalSize;
    this.hardLimit = hardLimit;
  }
}

/** The answer inside a native envelope (JSON text), or the error it names, thrown. */
function unwrap(text) {
  return unwrapValue(JSON.parse(text));
}

/** `unwrap` of an envelope already parsed. */
function unwrapValue(e) {
  if ('ok' in e) return e.ok;
  if (e.invalid) throw new InvalidCaseError(e.invalid.path, e.invalid.reason);
  if (e.internal) throw new InternalError(e.internal.implementation, e.internal.reason);
  if (e.spec) throw new SpecError(e.spec);
  if (e.terminated) throw new CompactionTerminated(e.terminated.outcome, e.terminated.finalSize, e.terminated.hardLimit);
  const t = e.transcript;
  const Class = t.kind === 'NotSupported' ? UnsupportedContentError : TranscriptError;
  throw new Class(t.kind, t.path, t.reason);
}

module.exports = {
  HybridCompactionError,
  InvalidCaseError,
  InternalError,
  SpecError,
  TranscriptError,
  UnsupportedContentError,
  CompactionTerminated,
  unwrap,
  unwrapValue,
};
