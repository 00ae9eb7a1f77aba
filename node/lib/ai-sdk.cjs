'use strict';
// hybrid-compaction/ai-sdk: the Vercel AI SDK's per-step seams (`ai` 7.x: `generateText`,
// `streamText`, `ToolLoopAgent`).
//
// - compactionStep(policy, {reducer, trace, estimator}) is a `prepareStep` that compacts each
//   step's messages (format `ai-sdk`, SPEC TRN-20) with the library's node, your reducer the
//   untrusted proposer. The step's instructions (the system prompt, which the SDK keeps apart)
//   are compacted as the first message(s) and never returned; when the compaction changed the
//   messages it returns `{messages}` (your own message objects where kept), which the SDK
//   carries forward to later steps, so each step compacts what the last one left plus what it
//   added.
// - traceRecorder({policy, trace, prepareStep}) records every model call as an observed record
//   (SPEC TRC-13): its `.prepareStep` keeps the step's history (the instructions, then the
//   messages, before the `prepareStep` it wraps changes them) and its `.middleware` (a
//   LanguageModelMiddleware for `wrapLanguageModel`) sees the prompt the model receives
//   (generate and stream alike) and writes the record. The history is written as the SDK writes
//   a prompt, by the SDK's own conversion (`convertToLanguageModelPrompt` of `ai/internal`, URLs
//   left as URLs: nothing is downloaded), so a message the model receives unchanged has its
//   history id; where that conversion is missing or refuses the history, by the same rules in
//   JavaScript (string content as a text part, an image part as a file part, consecutive tool
//   messages as one, the approval parts a model is not sent left out). A URL the SDK downloads
//   for a model that does not take it reaches the model as data: that message is judged a new
//   one.
//
// `ai` is a peer dependency; only traceRecorder's prepareStep loads it (`ai/internal`).

const hc = require('./index.cjs');

const POLICY_FIELDS = ['hardLimit', 'triggerMargin', 'recentMessageRetentionCount', 'maximumCompactionAttempts'];

function requirePolicyObject(policy, who) {
  if (policy === null || typeof policy !== 'object' || Array.isArray(policy)) {
    throw new TypeError(`${who} needs a policy object (hc.policy({...})), got ${policy === null ? 'null' : typeof policy}`);
  }
  const missing = POLICY_FIELDS.filter((f) => !(f in policy));
  if (missing.length) throw new TypeError(`${who}: the policy lacks ${missing.join(', ')} (build it with hc.policy({...}))`);
}

/** The step's instructions (`string | SystemModelMessage | SystemModelMessage[]`) as system
 * messages. */
function systemMessages(instructions) {
  if (instructions === undefined || instructions === null || instructions === '') return [];
  if (typeof instructions === 'string') return [{ role: 'system', content: instructions }];
  return (Array.isArray(instructions) ? instructions : [instructions]).map((m) => ({ ...m, role: 'system' }));
}

/** A `prepareStep` compacting each step's messages (see the module comment). */
function compactionStep(policy, { reducer, trace, estimator, workflow } = {}) {
  requirePolicyObject(policy, 'compactionStep');
  const compactor = new hc.Compactor(policy, { reducer, trace, estimator, workflow, format: 'ai-sdk' });
  return async function prepareStep({ messages, instructions }) {
    if (!Array.isArray(messages)) throw new TypeError('prepareStep: messages must be an array');
    const system = systemMessages(instructions);
    const result = await compactor.compact([...system, ...messages]);
    const out = result.messages.filter((m) => !system.includes(m));
    const same = out.length === messages.length && out.every((m, i) => m === messages[i]);
    return same ? undefined : { messages: out };
  };
}

// ---- the prompt as the SDK writes it (convertToLanguageModelPrompt), for both sides ----

const URLISH = /^[a-z][a-z0-9+.-]*:/i;

/** A file part's data as the SDK tags it: `{type: "data", data}` or `{type: "url", url}`. */
function fileData(d) {
  if (d instanceof URL) return { type: 'url', url: d.href };
  if (typeof d === 'string') return URLISH.test(d) && !d.startsWith('data:') ? { type: 'url', url: d } : { type: 'data', data: d };
  if (d !== null && typeof d === 'object' && !ArrayBuffer.isView(d) && !(d instanceof ArrayBuffer) && typeof d.type === 'string') {
    return d.type === 'url' && d.url instanceof URL ? { ...d, url: d.url.href } : d;
  }
  return { type: 'data', data: d };
}

function filePart(p) {
  const image = p.type === 'image';
  return { type: 'file', data: fileData(image ? p.image : p.data), filename: p.filename, mediaType: image ? p.mediaType ?? 'image' : p.mediaType, providerOptions: p.providerOptions };
}

function part(p) {
  if (p === null || typeof p !== 'object') return p;
  if (p.type === 'image' || p.type === 'file') return filePart(p);
  if (p.type === 'reasoning-file') return { ...p, data: fileData(p.data) };
  if (p.type === 'tool-approval-response') return { type: p.type, approvalId: p.approvalId, approved: p.approved, reason: p.reason };
  return p;
}

function keep(role, p) {
  if (p === null || typeof p !== 'object') return true;
  if (p.type === 'text' && p.text === '') return role === 'assistant' && p.providerOptions != null;
  if (role === 'assistant' && p.type === 'tool-approval-request') return false;
  if (role === 'tool' && p.type === 'tool-approval-response') return Boolean(p.providerExecuted);
  return true;
}

/** One message as the SDK writes it into a prompt. */
function promptMessage(m) {
  if (m === null || typeof m !== 'object' || m.role === 'system' || !('content' in m)) return m;
  const content = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
  if (!Array.isArray(content)) return m;
  return { ...m, content: content.filter((p) => keep(m.role, p)).map(part) };
}

/** Messages as the SDK writes them into a prompt: each as above, consecutive tool messages as
 * one, empty tool messages left out. */
function promptMessages(messages) {
  const out = [];
  for (const m of messages.map(promptMessage)) {
    const last = out.at(-1);
    if (m && m.role === 'tool' && last && last.role === 'tool' && Array.isArray(last.content)) {
      out[out.length - 1] = { ...last, content: [...last.content, ...m.content] };
    } else {
      out.push(m);
    }
  }
  return out.filter((m) => !(m && m.role === 'tool' && Array.isArray(m.content) && m.content.length === 0));
}

/** The prompt a model received (`LanguageModelV4Prompt`) as ModelMessages. */
function sentMessages(prompt) {
  return promptMessages(prompt.map((m) => (m.role === 'system' ? { role: 'system', content: m.content, providerOptions: m.providerOptions } : m)));
}

/** The SDK's own prompt conversion (`ai/internal`), or null where the installed `ai` has none. */
let sdkConvert;
function sdkPromptConversion() {
  if (sdkConvert === undefined) {
    try {
      const f = require('ai/internal').convertToLanguageModelPrompt;
      sdkConvert = typeof f === 'function' ? f : null;
    } catch {
      sdkConvert = null;
    }
  }
  return sdkConvert;
}

const EVERY_URL = Object.freeze({ '*': [/^/] });
const NO_DOWNLOAD = async (requests) => requests.map(() => null);

/** A step's history (its instructions and messages) as the SDK writes it into a prompt. */
async function historyMessages(instructions, messages) {
  const convert = sdkPromptConversion();
  if (convert !== null) {
    try {
      const prompt = await convert({ prompt: { instructions, messages }, supportedUrls: EVERY_URL, download: NO_DOWNLOAD });
      return sentMessages(prompt);
    } catch {
      // A history the SDK refuses (a call without its result): written by the rules below.
    }
  }
  return promptMessages([...systemMessages(instructions), ...messages]);
}

let recorders = 0;

/** A recorder of every model call (see the module comment): one per agent loop at a time (a
 * step's history waits for its model call), each its own run (`ai-sdk-<n>` unless named). The
 * middleware alone (no `.prepareStep`) records the prompt as both history and sent: sizes and
 * tool exchanges are judged, what a `prepareStep` dropped is not seen. */
function traceRecorder({ policy, trace, run, prepareStep } = {}) {
  if (!(trace instanceof hc.TraceWriter)) throw new TypeError('traceRecorder needs {trace: a TraceWriter}');
  if (policy !== undefined) requirePolicyObject(policy, 'traceRecorder');
  if (prepareStep !== undefined && typeof prepareStep !== 'function') {
    throw new TypeError(`traceRecorder: prepareStep must be a function (the prepareStep to wrap), got ${typeof prepareStep}`);
  }
  if (run !== undefined && (typeof run !== 'string' || run === '')) throw new TypeError(`traceRecorder: run must be a non-empty string, got ${typeof run}`);
  recorders += 1;
  const runId = run ?? `ai-sdk-${recorders}`;
  let history = null;

  function observe(prompt, dispatch) {
    const held = history ?? sentMessages(prompt);
    history = null;
    const sent = prompt === null ? null : sentMessages(prompt);
    trace.observe(held, sent, { policy, run: runId, format: 'ai-sdk', dispatch });
  }

  async function recordingStep(options) {
    history = await historyMessages(options.instructions, options.messages);
    if (prepareStep === undefined) return undefined;
    try {
      return await prepareStep(options);
    } catch (e) {
      history = null; // no model call follows
      throw e;
    }
  }

  const middleware = {
    specificationVersion: 'v4',
    async wrapGenerate({ doGenerate, params }) {
      let result;
      try {
        result = await doGenerate();
      } catch (e) {
        observe(params.prompt, 'failed');
        throw e;
      }
      observe(params.prompt);
      return result;
    },
    async wrapStream({ doStream, params }) {
      let result;
      try {
        result = await doStream();
      } catch (e) {
        observe(params.prompt, 'failed');
        throw e;
      }
      observe(params.prompt);
      return result;
    },
  };

  return {
    prepareStep: recordingStep,
    middleware,
    /** Ends the run in the trace (a runEnd record). */
    endRun: () => trace.endRun(runId),
  };
}

module.exports = { compactionStep, traceRecorder, promptMessages, sentMessages, historyMessages };
