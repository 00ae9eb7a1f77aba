'use strict';
// The converters: provider and framework messages to wire entries, through the library's one
// converter (SPEC TRN; node/src/transcript.rs). A refusal is a TranscriptError (an
// UnsupportedContentError for content the closed content model cannot hold) with its kind, the
// path of the offending value (`messages[3].content[1]`) and the reason.

const { unwrap, TranscriptError } = require('./errors.cjs');

/** A LangChain.js message object (`BaseMessage`) as its serialized dict (`toDict()`), which the
 * `langchain` format reads (SPEC TRN-4); anything else as it is. */
function langchainJson(m) {
  return m !== null && typeof m === 'object' && typeof m.toDict === 'function' ? m.toDict() : m;
}

/** A value of an AI SDK `ModelMessage` as JSON can hold it (SPEC TRN-20): binary data
 * (`Uint8Array`, `Buffer`, `ArrayBuffer`) as base64 text, a `URL` as its text; anything else as
 * it is (the JSON writer refuses what JSON cannot hold, naming its path). */
function aiSdkJson(v, open = new Set()) {
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof URL) return v.href;
  if (v instanceof ArrayBuffer) return Buffer.from(v).toString('base64');
  if (ArrayBuffer.isView(v)) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
  const proto = Object.getPrototypeOf(v);
  // A cycle is left as it is: the JSON writer refuses it with its path.
  if (open.has(v) || (!Array.isArray(v) && proto !== Object.prototype && proto !== null)) return v;
  open.add(v);
  let out;
  if (Array.isArray(v)) {
    out = v.map((x) => aiSdkJson(x, open));
  } else {
    out = {};
    for (const k of Object.keys(v)) out[k] = aiSdkJson(v[k], open);
  }
  open.delete(v);
  return out;
}

/** The messages of `format` as the converter reads them (LangChain.js objects as their dicts,
 * AI SDK binary data as base64 text), the others as they are. */
/** One message as the wire format has it: LangChain.js objects and AI SDK binary data written. */
function wireMessage(format, m) {
  if (format === 'langchain') return langchainJson(m);
  if (format === 'ai-sdk') return aiSdkJson(m);
  return m;
}

function wireMessages(format, messages) {
  if (format === 'langchain' || format === 'ai-sdk') return messages.map((m) => wireMessage(format, m));
  return messages;
}

const factory = (native, jsonText) => {
  function transcript(messages, format, { system, ids, overrides } = {}) {
    if (!Array.isArray(messages)) {
      throw new TypeError(`messages must be an array, got ${messages === null ? 'null' : typeof messages}`);
    }
    const t = { format, messages: wireMessages(format, messages) };
    if (system !== undefined && system !== null) t.system = system;
    if (ids !== undefined) t.ids = ids;
    if (overrides !== undefined && Object.keys(overrides).length) t.overrides = overrides;
    let text;
    try {
      text = jsonText(t);
    } catch (e) {
      // The path of a JS-only refusal, relative to the transcript (as the converter's paths).
      if (e.path !== undefined) throw new TranscriptError('InvalidArgument', e.path.replace(/^\$\.?/, ''), e.reason);
      throw e;
    }
    return unwrap(native.transcriptEntries(text));
  }

  return {
    /** An OpenAI chat transcript as wire entries (SPEC TRN-2, TRN-11, TRN-12; ids TRN-5). */
    fromOpenAI: (messages, options) => transcript(messages, 'openai-chat', options),
    /** An Anthropic Messages transcript as wire entries (SPEC TRN-3, TRN-10); `system` (a
     * string or text blocks) is the first entry. */
    fromAnthropic: (messages, system, options = {}) => transcript(messages, 'anthropic-messages', { ...options, system }),
    /** OpenAI Responses input items as wire entries (SPEC TRN-17); `instructions` first. */
    fromOpenAIResponses: (items, instructions, options = {}) => transcript(items, 'openai-responses', { ...options, system: instructions }),
    /** LangChain messages as wire entries (SPEC TRN-4, TRN-7 .. TRN-10): LangChain.js message
     * objects, their serialized dicts (`toDict()`, `{lc: 1, type: "constructor", ...}`) and
     * role dicts. */
    fromLangChain: (messages, options) => transcript(messages, 'langchain', options),
    /** The Vercel AI SDK's `ModelMessage`s as wire entries (SPEC TRN-20): system messages among
     * them (give `instructions` as a first `{role: "system", content}` message). */
    fromAISDK: (messages, options) => transcript(messages, 'ai-sdk', options),
  };
};

factory.langchainJson = langchainJson;
factory.aiSdkJson = aiSdkJson;
factory.wireMessages = wireMessages;
factory.wireMessage = wireMessage;
module.exports = factory;
