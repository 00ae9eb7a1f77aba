'use strict';
// hybrid-compaction/langchain: middleware for LangChain.js v1 agents (`createAgent` from
// `langchain`, built with its `createMiddleware` and `wrapModelCall`).
//
// - compactionMiddleware(policy, {reducer, trace}) compacts the messages of every model call
//   with the library's node (compact, with your reducer as the untrusted proposer): the model
//   gets the compacted messages (your own message objects where kept), the agent's state is
//   untouched.
// - traceMiddleware({policy, trace}) records every model call as an observed record (SPEC
//   TRC-13): the history (the system message first, then the agent's messages as its
//   `beforeModel` hook saw them, before any later middleware's `beforeModel` rewrote the state,
//   as `summarizationMiddleware` does; the request's messages if it saw none) and what the
//   model actually received, seen by a callback handler on the request's model
//   (`request.model.withConfig({callbacks})`), so middleware inside it (a compaction, a
//   summarization, a context edit) is judged too. Put it first in the `middleware` list: the
//   first middleware wraps the others.
//
// `langchain` and `@langchain/core` are peer dependencies, required when these are first called.

const hc = require('./index.cjs');

function system(request) {
  const s = request.systemMessage;
  if (!s) return null;
  const c = s.content;
  const empty = c === undefined || c === null || c === '' || (Array.isArray(c) && c.length === 0);
  return empty ? null : s;
}

/** Middleware compacting every model call's messages (see the module comment). */
function compactionMiddleware(policy, { reducer, trace, estimator, name = 'HybridCompaction' } = {}) {
  const { createMiddleware } = require('langchain');
  const compactor = new hc.Compactor(policy, { reducer, trace, estimator, format: 'langchain' });
  return createMiddleware({
    name,
    wrapModelCall: async (request, handler) => {
      const s = system(request);
      const history = s ? [s, ...request.messages] : [...request.messages];
      const result = await compactor.compact(history);
      const messages = s && result.messages[0] === s ? result.messages.slice(1) : result.messages;
      return handler({ ...request, messages });
    },
  });
}

/** Middleware recording every model call as an observed record (see the module comment). */
function traceMiddleware({ policy, trace, run, name = 'HybridCompactionTrace' } = {}) {
  const { createMiddleware } = require('langchain');
  if (!(trace instanceof hc.TraceWriter)) throw new TypeError('traceMiddleware needs {trace: a TraceWriter}');
  let runs = 0;
  const runId = run ?? `langchain-${++runs}`;
  // The agent's messages at this model call's `beforeModel` (the first middleware's runs first).
  let held = null;
  return createMiddleware({
    name,
    beforeModel: (state) => {
      held = [...state.messages];
      return undefined;
    },
    wrapModelCall: async (request, handler) => {
      const s = system(request);
      const messages = held ?? request.messages;
      held = null;
      const history = s ? [s, ...messages] : [...messages];
      let sent = null;
      const recorder = {
        handleChatModelStart(_llm, messages) {
          if (sent === null) sent = [...messages[0]];
        },
      };
      let response;
      try {
        response = await handler({ ...request, model: request.model.withConfig({ callbacks: [recorder] }) });
      } catch (e) {
        trace.observe(history, sent, { policy, run: runId, dispatch: sent === null ? 'refused' : 'failed', format: 'langchain' });
        throw e;
      }
      trace.observe(history, sent, { policy, run: runId, format: 'langchain' });
      return response;
    },
  });
}

module.exports = { compactionMiddleware, traceMiddleware };
