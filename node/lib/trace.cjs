'use strict';
// TraceWriter: writes a trace (docs/TRACE.md) that `check` and `hybrid-compaction check` judge:
// the calls of compact and Compactor as full call records, and with `observe` the provider calls
// of any system (a framework's own compaction, or none) as observed records (SPEC TRC-13). The
// addon's recorder (node/src/record.rs) makes every line; this object owns the file, writes
// each line whole and synchronously, and refuses to write once closed.

const fs = require('node:fs');
const { HybridCompactionError, unwrap } = require('./errors.cjs');
const tracedir = require('./tracedir.cjs');
const { wireMessages } = require('./convert.cjs');

/** A trace cannot be written: `path` names the file, `reason` what went wrong. */
class TraceWriteError extends HybridCompactionError {
  constructor(path, reason) {
    super(`cannot write the trace ${path}: ${reason}`);
    this.path = path;
    this.reason = reason;
  }
}

/** The policy an observed call is judged against when none is given: structure only. */
const UNBOUNDED = Object.freeze({
  hardLimit: 2 ** 31 - 1,
  triggerMargin: 1,
  recentMessageRetentionCount: 1,
  maximumCompactionAttempts: 1,
  preservationLabel: 'observed',
  preservationVersion: 1,
  estimator: { kind: 'utf8' },
});

const RESPONSES_ITEMS = new Set(['message', 'reasoning', 'compaction', 'item_reference', 'mcp_list_tools', 'mcp_approval_request', 'mcp_approval_response']);
const RESPONSES_PARTS = new Set(['input_text', 'output_text', 'input_image', 'input_file']);

/** The format of `messages`, as the Python package detects it (`_detect`): Responses items,
 * LangChain serialized messages, else Anthropic when a system is given apart, else OpenAI chat. */
function detect(messages, system) {
  for (const m of messages) {
    if (m === null || typeof m !== 'object' || Array.isArray(m)) return 'langchain';
    if (typeof m.toDict === 'function') return 'langchain'; // a LangChain.js message object
    const kind = m.type;
    if (RESPONSES_ITEMS.has(kind) || (typeof kind === 'string' && /_(call|output)$/.test(kind)) || 'call_id' in m
        || (Array.isArray(m.content) && m.content.some((p) => p && RESPONSES_PARTS.has(p.type)))) {
      return 'openai-responses';
    }
    if ('type' in m && !('role' in m)) return 'langchain';
  }
  return system !== undefined && system !== null ? 'anthropic-messages' : 'openai-chat';
}

module.exports = (native, jsonText, requirePolicy) => {
  class TraceWriter {
    /** A writer of the trace file `path` (created or truncated); without one, a file of its own
     * in the trace directory of a test run with the hook (HC_TRACE_DIR). `content`: write the
     * messages too (by default entries are redacted: sizes, digests and structure). */
    constructor(path, { content = false, producer = 'hybrid-compaction (node)' } = {}) {
      if (path === undefined || path === null) {
        path = tracedir.newPath();
        if (path === null) {
          throw new TraceWriteError('hc-trace', `no path was given, and no test run with the hook (hybrid-compaction/test-hook) or $${tracedir.ENV} names a trace directory`);
        }
      }
      if (typeof path !== 'string' || path === '') throw new TypeError(`path must be a file path, got ${typeof path}`);
      this.path = path;
      try {
        this._fd = fs.openSync(path, 'w');
      } catch (e) {
        throw new TraceWriteError(path, e.message);
      }
      this._native = new native.TraceRecorder(Boolean(content));
      this._calls = new Map();
      this.closed = false;
      this._emit(native.TraceRecorder.headerLine(String(producer)));
    }

    _emit(line) {
      if (this.closed) throw new TraceWriteError(this.path, 'the trace writer is closed');
      try {
        fs.writeSync(this._fd, `${line}\n`);
      } catch (e) {
        throw new TraceWriteError(this.path, e.message);
      }
    }

    /** Writes a session's last call (Compactor's). */
    _record(session) {
      if (this.closed) throw new TraceWriteError(this.path, 'the trace writer is closed');
      const line = session.takeRecord(this._native);
      if (line !== null && line !== undefined) this._emit(line);
    }

    _endRun(session) {
      const line = session.endRun(this._native);
      if (line !== null && line !== undefined) this._emit(line);
    }

    /**
     * Records one provider call of any system as an observed record (SPEC TRC-13) and returns
     * its call id. `history`: everything the system held for the call, its system prompt first;
     * `sent`: what the provider received (null: nothing was sent). `policy` is what the call is
     * judged against (by default structure only). `run` names the run, `call` the call (by
     * default `model-<n>` per run), `dispatch` "answered" (the default when sent), "failed"
     * or "refused". A message the converters cannot map throws TranscriptError with its path
     * (`history.messages[3]`); nothing is written then.
     */
    observe(history, sent, { policy, run = 'observed-1', call, format, dispatch, note } = {}) {
      if (!Array.isArray(history)) throw new TypeError('history must be an array of messages');
      if (sent !== null && sent !== undefined && !Array.isArray(sent)) throw new TypeError('sent must be an array of messages or null');
      const chosen = policy ?? UNBOUNDED;
      requirePolicy(chosen);
      const fmt = format ?? detect(history);
      const written = (ms) => wireMessages(fmt, ms);
      const h = jsonText({ format: fmt, messages: written(history) });
      const s = sent === null || sent === undefined ? null : jsonText({ format: fmt, messages: written(sent) });
      let id = call;
      if (id === undefined) {
        const n = (this._calls.get(run) ?? 0) + 1;
        id = `model-${n}`;
        const line = unwrap(this._native.observed(run, id, jsonText(chosen), h, s, dispatch ?? null, note ?? null));
        this._calls.set(run, n);
        this._emit(line);
        return id;
      }
      this._emit(unwrap(this._native.observed(run, id, jsonText(chosen), h, s, dispatch ?? null, note ?? null)));
      return id;
    }

    /** Ends the observed run `run` (a runEnd record). */
    endRun(run = 'observed-1') {
      this._emit(this._native.endObservedRun(run));
      this._calls.delete(run);
    }

    /** Closes the file; later writes throw TraceWriteError. Closing twice is harmless. */
    close() {
      if (this.closed) return;
      this.closed = true;
      fs.closeSync(this._fd);
    }
  }

  return { TraceWriter, TraceWriteError, detect, UNBOUNDED };
};
