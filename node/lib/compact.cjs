'use strict';
// compact and Compactor: the library's per-call path (SPEC NODE-2 .. NODE-5) on the caller's
// messages, with a JavaScript reducer (sync or async), never trusted. The node runs on a worker
// thread of the addon; this layer steps through the call (node/src/compact.rs, "Threads"):
// when the node needs the reducer, it calls it here, on this thread, with the caller's own
// objects (the history, or its own previous answer), awaits it if it answered a Promise, and
// hands the answer back as JSON text. The final messages are the caller's objects where a
// message was kept and the reducer's objects where it added one (identity kept).
//
// A Compactor keeps, in a WeakMap, each message object's witness (lib/json.cjs) and the id of
// its conversion, which the session keeps: a repeat call converts only the messages it cannot
// prove unchanged (docs/NODE.md, "Repeat calls"; node/src/reuse.rs).

const { unwrap, unwrapValue, SpecError } = require('./errors.cjs');
const { toJson, witnessed, unchanged, Refusal } = require('./json.cjs');
const { wireMessage, wireMessages } = require('./convert.cjs');

const FORMATS = ['openai-chat', 'anthropic-messages', 'langchain', 'openai-responses', 'ai-sdk'];

const SYSTEM_FORMATS = ['anthropic-messages', 'openai-responses'];

/** The result of one compaction (`WithinLimit`, `Reduced` or `PreservationFallback`). */
class Compaction {
  constructor(messages, system, payload, format) {
    this.messages = messages;
    this.system = system;
    this.format = format;
    this.assembly = payload.assembly;
    this.outcome = payload.assembly.outcome;
    this.diagnostics = payload.diagnostics;
    this.events = payload.events;
  }
}

/** The steps of one call: yields a thunk calling the reducer, gets its (awaited) answer. */
function* steps(call, objects, reducer, format) {
  const returned = [];
  let thrown;
  for (;;) {
    const event = JSON.parse(call.next());
    if ('done' in event) return { envelope: event.done, returned, thrown };
    const request = (event.reduce === 'history' ? objects : returned[event.reduce]).slice();
    let answer;
    try {
      answer = yield () => reducer(request);
    } catch (e) {
      thrown = e;
      call.reply('threw', String(e && e.message !== undefined ? e.message : e));
      continue;
    }
    if (answer === null || answer === undefined) {
      call.reply('null', '');
      continue;
    }
    if (!Array.isArray(answer)) {
      thrown = new TypeError(`the reducer must answer an array of messages, got ${typeof answer}`);
      call.reply('threw', thrown.message);
      continue;
    }
    let text;
    try {
      text = toJson(wireMessages(format, answer));
    } catch (e) {
      if (!(e instanceof Refusal)) throw e;
      thrown = new TypeError(`the reducer's answer at ${e.path}: ${e.reason}`);
      call.reply('threw', thrown.message);
      continue;
    }
    returned.push(answer);
    call.reply('answer', text);
  }
}

function runSync(gen) {
  let r = gen.next();
  while (!r.done) {
    let value;
    try {
      value = r.value();
      if (value && typeof value.then === 'function') {
        throw new TypeError('the reducer answered a Promise: use compact(), which awaits it, not compactSync()');
      }
    } catch (e) {
      r = gen.throw(e);
      continue;
    }
    r = gen.next(value);
  }
  return r.value;
}

async function runAsync(gen) {
  let r = gen.next();
  while (!r.done) {
    let value;
    try {
      value = await r.value();
    } catch (e) {
      r = gen.throw(e);
      continue;
    }
    r = gen.next(value);
  }
  return r.value;
}

module.exports = (native, jsonText, estimatorObject, requirePolicy, { TraceWriter, detect }) => {
  function newSession(policy, estimator, persistent, workflow) {
    requirePolicy(policy);
    const p = estimator === undefined || estimator === null ? policy : { ...policy, estimator: estimatorObject(estimator) };
    const text = jsonText(p);
    try {
      return new native.Session(text, persistent, workflow);
    } catch (e) {
      if (typeof e.message === 'string' && e.message.startsWith('{')) unwrap(e.message);
      throw e;
    }
  }

  /**
   * A long-lived compactor: its calls share one run (SPEC LSE-6) and one memo of sizes
   * (SPEC EST-7). `reducer(messages) -> messages` (or a Promise of them) is your proposer.
   */
  class Compactor {
    constructor(policy, { reducer, estimator, format, trace, workflow = 'hybrid-compaction', persistent = true, _reuse = true } = {}) {
      if (trace !== undefined && trace !== null && !(trace instanceof TraceWriter)) {
        throw new TypeError('trace must be a TraceWriter');
      }
      if (reducer !== undefined && reducer !== null && typeof reducer !== 'function') {
        throw new TypeError(`reducer must be a function, got ${typeof reducer}`);
      }
      if (format !== undefined && !FORMATS.includes(format)) {
        throw new TypeError(`format must be one of ${FORMATS.map((f) => JSON.stringify(f)).join(', ')}, got ${JSON.stringify(format)}`);
      }
      this._session = newSession(policy, estimator, persistent, String(workflow));
      this._reducer = reducer ?? null;
      this._format = format;
      this._queue = Promise.resolve();
      this._trace = trace ?? null;
      this._pending = 0;
      // message object -> {format, witness, id, gen} (see the module comment); null: every call
      // converts its whole transcript (the one-call functions, whose compactor is not kept).
      // The session keeps the conversions of its last call and those made since (a call makes
      // a new generation): an id is current while its `gen` is `this._gen`.
      this._kept = _reuse ? new WeakMap() : null;
      this._gen = 0;
    }

    /** Each message's kept entry, reused where its witness proves it unchanged, else written
     * and converted (the new ones in one native call); null when anything is refused or throws
     * (the whole transcript is then converted, which reports it with its path). */
    _converted(messages, format) {
      try {
        const out = new Array(messages.length);
        const values = [];
        const fresh = [];
        for (let i = 0; i < messages.length; i++) {
          const m = messages[i];
          const value = wireMessage(format, m);
          const keyed = m !== null && typeof m === 'object';
          const kept = keyed ? this._kept.get(m) : undefined;
          if (kept !== undefined && kept.gen === this._gen && kept.format === format && unchanged(value, kept.witness)) {
            out[i] = kept;
            continue;
          }
          const witness = keyed ? [] : undefined;
          // the walk records the witness; the text is written for all new messages at once
          if (!witnessed(value, witness ?? [])) return null;
          values.push(value);
          fresh.push(i);
          out[i] = { format, witness, id: -1, gen: this._gen, m: keyed ? m : undefined };
        }
        if (fresh.length > 0) {
          const ids = this._session.adapt(format, Uint32Array.from(fresh), JSON.stringify(values));
          fresh.forEach((i, j) => {
            const e = out[i];
            e.id = ids[j];
            if (e.m !== undefined) this._kept.set(e.m, e);
            e.m = undefined;
          });
        }
        return out;
      } catch (e) {
        return null;
      }
    }

    /** The call on kept conversions, or null (see `_converted`). */
    _startKept(messages, format, system, overrides) {
      const entries = this._converted(messages, format);
      if (entries === null) return null;
      let systemText = null;
      let overridesText = null;
      try {
        if (system !== null) systemText = toJson(system);
        if (overrides !== undefined && overrides !== null && Object.keys(overrides).length) overridesText = toJson(overrides);
      } catch (e) {
        return null;
      }
      const ids = new Uint32Array(entries.length);
      for (let i = 0; i < entries.length; i++) ids[i] = entries[i].id;
      let call;
      try {
        call = this._session.startAdapted(format, ids, systemText, overridesText, this._reducer !== null);
      } catch (e) {
        return null; // an id the session does not keep (a bug): nothing started, convert it whole
      }
      // The session now keeps exactly these conversions: a new generation.
      this._gen += 1;
      for (const e of entries) e.gen = this._gen;
      return call;
    }

    _start(messages, system, overrides) {
      if (!Array.isArray(messages)) {
        throw new TypeError(`messages must be an array, got ${messages === null ? 'null' : typeof messages}`);
      }
      const format = this._format ?? detect(messages, system);
      const hasSystem = system !== undefined && system !== null && SYSTEM_FORMATS.includes(format);
      let call = this._kept !== null ? this._startKept(messages, format, hasSystem ? system : null, overrides) : null;
      if (call === null) {
        const t = { format, messages: wireMessages(format, messages) };
        if (hasSystem) t.system = system;
        if (overrides !== undefined && Object.keys(overrides).length) t.overrides = overrides;
        call = this._session.start(jsonText(t), this._reducer !== null, hasSystem);
      }
      const objects = messages.slice();
      return { gen: steps(call, objects, this._reducer, format), objects, system: hasSystem ? system : null, format };
    }

    _finish({ objects, system, format }, { envelope, returned, thrown }) {
      if (this._trace !== null) this._trace._record(this._session);
      let payload;
      try {
        payload = unwrapValue(envelope);
      } catch (e) {
        if (e instanceof SpecError && thrown !== undefined) e.cause = thrown;
        throw e;
      }
      const offset = system !== null ? 1 : 0;
      let keptSystem = null;
      const out = [];
      for (const s of payload.final) {
        if (s[0] === 'o') {
          let [, i, k] = s;
          if (i < offset) {
            keptSystem = system;
            i += 1;
            k -= 1;
          }
          out.push(...objects.slice(i - offset, i - offset + k));
        } else if (s[0] === 'r') {
          out.push(...returned[s[1]].slice(s[2], s[2] + s[3]));
        } else {
          out.push(s[1]);
        }
      }
      return new Compaction(out, keptSystem, payload, format);
    }

    /**
     * Compacts `messages` (a Promise of the Compaction). Throws (rejects with)
     * CompactionTerminated when nothing may be sent, SpecError `ReducerFailed` when the reducer
     * threw (its error is the `cause`) or answered something that is not messages,
     * `ReducerContract` when it answered null or made up tool content, TranscriptError for a
     * message the converters refuse. Calls are made one at a time, in order.
     */
    compact(messages, { system, overrides } = {}) {
      this._pending += 1;
      const result = this._queue.then(async () => {
        try {
          const started = this._start(messages, system, overrides);
          return this._finish(started, await runAsync(started.gen));
        } finally {
          this._pending -= 1;
        }
      });
      this._queue = result.catch(() => {});
      return result;
    }

    /** Throws while a `compact` of this Compactor is pending: its call holds the session, and
     * waiting for it on this thread would never end. */
    _idle(what) {
      if (this._pending > 0) {
        throw new Error(`a compact() call of this Compactor is still pending: await it before ${what}`);
      }
    }

    /** `compact` for a synchronous reducer, answering the Compaction itself. Throws while a
     * `compact` of this Compactor is pending (await it first). */
    compactSync(messages, { system, overrides } = {}) {
      this._idle('compactSync()');
      const started = this._start(messages, system, overrides);
      return this._finish(started, runSync(started.gen));
    }

    /** Ends the run in the trace (a runEnd record) if one is being written. */
    close() {
      this._idle('close()');
      if (this._trace !== null && !this._trace.closed) this._trace._endRun(this._session);
    }

    /** The memo's counters (SPEC EST-7): `{hits, misses, cached}`; readable while a call is
     * pending (they are read beside the session, not through it). */
    get memoStats() {
      const [hits, misses, cached] = this._session.memoStats();
      return { hits, misses, cached };
    }
  }

  /** One call: `new Compactor(policy, options).compact(messages, options)` in a run of its own. */
  function compact(messages, policy, { reducer, estimator, format, system, overrides, trace } = {}) {
    return new Compactor(policy, { reducer, estimator, format, trace, persistent: false, _reuse: false }).compact(messages, { system, overrides });
  }

  /** `compact` for a synchronous reducer. */
  function compactSync(messages, policy, { reducer, estimator, format, system, overrides, trace } = {}) {
    return new Compactor(policy, { reducer, estimator, format, trace, persistent: false, _reuse: false }).compactSync(messages, { system, overrides });
  }

  return { Compaction, Compactor, compact, compactSync };
};
