'use strict';
// hybrid-compaction/langchain with a real LangChain.js v1 agent (createAgent, langchain 1.5.14)
// and its own test model (fakeModel, @langchain/core/testing): a tool loop with large tool
// results compacts at every model call, every call is recorded by traceMiddleware (what the
// model actually received, seen by a callback on the request's model) and checks clean; a
// middleware that orphans tool results is flagged with its TRC clause.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const hc = require('hybrid-compaction');
const { compactionMiddleware, traceMiddleware } = require('hybrid-compaction/langchain');
const { createAgent, createMiddleware, tool } = require('langchain');
const { fakeModel } = require('@langchain/core/testing');
const { AIMessage, HumanMessage, ToolMessage } = require('@langchain/core/messages');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hc-lc-'));
const policy = hc.policy({
  hardLimit: 9000, triggerMargin: 500, recentMessageRetentionCount: 1,
  maximumCompactionAttempts: 2, preservationLabel: 'lc-agent', preservationVersion: 1,
});
const search = tool(async ({ q }) => `results for ${q}: ${'Zürich, 12°C, rain; '.repeat(30)}`, {
  name: 'search', description: 'search the web',
  schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
});

// Three earlier turns, each with a large tool result: what compaction can drop.
function earlier() {
  const out = [];
  for (let t = 0; t < 3; t++) {
    out.push(new HumanMessage({ content: `Earlier question ${t}?`, id: `h${t}` }));
    out.push(new AIMessage({ content: '', tool_calls: [{ name: 'search', args: { q: `old${t}` }, id: `old_${t}`, type: 'tool_call' }], id: `a${t}` }));
    out.push(new ToolMessage({ content: `old results ${t}: ${'Genève, 15°C, sun; '.repeat(150)}`, tool_call_id: `old_${t}`, id: `t${t}` }));
    out.push(new AIMessage({ content: `Answer ${t}.`, id: `r${t}` }));
  }
  return out;
}

function model(steps) {
  let m = fakeModel();
  for (let i = 0; i < steps; i++) m = m.respondWithTools([{ name: 'search', args: { q: `q${i}` }, id: `call_${i}` }]);
  return m.respond(new AIMessage('Done: rain all week.'));
}

test('a createAgent tool loop compacts at every call; every call recorded and clean', async () => {
  const file = path.join(dir, 'clean.jsonl');
  const trace = new hc.TraceWriter(file);
  const compactions = [];
  const reducer = (ms) => {
    const turn = ms.findLastIndex((m) => HumanMessage.isInstance(m));
    const out = [ms[0], new AIMessage({ content: 'Earlier: sun in Genève.', id: `summary-${compactions.length}` }), ...ms.slice(turn)];
    compactions.push(out);
    return out;
  };
  const m = model(3);
  const agent = createAgent({
    model: m, tools: [search], systemPrompt: 'You are brief.',
    middleware: [traceMiddleware({ policy, trace }), compactionMiddleware(policy, { reducer })],
  });
  const result = await agent.invoke({ messages: [...earlier(), new HumanMessage('Weather in Zürich this week?')] });
  trace.close();
  assert.equal(result.messages.at(-1).content, 'Done: rain all week.');
  assert.equal(compactions.length, m.callCount, "a compaction at every model call");
  const report = hc.check(file);
  assert.equal(report.calls, m.callCount);
  assert.deepEqual(report.violations, [], JSON.stringify(report.violations));
  // The model received the compaction (the system, the summary, the current turn), not the
  // agent's whole history, which the agent keeps.
  assert.equal(m.calls.at(-1).messages[1].content, 'Earlier: sun in Genève.');
  assert.equal(result.messages.length, 12 + 1 + 3 * 2 + 1);
});

test('a middleware that orphans tool results is flagged with its clause', async () => {
  const file = path.join(dir, 'orphaning.jsonl');
  const trace = new hc.TraceWriter(file);
  const orphaning = createMiddleware({
    name: 'DropToolCalls',
    wrapModelCall: (request, handler) => handler({
      ...request,
      messages: request.messages.filter((m) => !(AIMessage.isInstance(m) && m.tool_calls && m.tool_calls.length)),
    }),
  });
  const agent = createAgent({ model: model(2), tools: [search], systemPrompt: 'You are brief.', middleware: [traceMiddleware({ policy, trace }), orphaning] });
  await agent.invoke({ messages: [new HumanMessage('Weather?')] });
  trace.close();
  const report = hc.check(file);
  assert.equal(report.calls, 3);
  const clauses = new Set(report.violations.map((v) => v.clause));
  assert.ok(clauses.has('TRC-3') || clauses.has('TRC-5'), JSON.stringify([...clauses]));
  assert.deepEqual([...new Set(report.violations.map((v) => v.call))].sort(), ['model-2', 'model-3']);
});

test('the history is what the agent held before a later beforeModel rewrote it (summarizationMiddleware)', async () => {
  const { summarizationMiddleware } = require('langchain');
  const file = path.join(dir, 'summarization.jsonl');
  const trace = new hc.TraceWriter(file);
  let summarizer = fakeModel();
  for (let i = 0; i < 5; i++) summarizer = summarizer.respond(new AIMessage('Summary: searched.'));
  const m = model(3);
  const agent = createAgent({
    model: m, tools: [search], systemPrompt: 'You are brief.',
    middleware: [traceMiddleware({ policy, trace }), summarizationMiddleware({ model: summarizer, trigger: { tokens: 1500 }, keep: { messages: 2 } })],
  });
  await agent.invoke({ messages: [...earlier(), new HumanMessage('Weather in Zürich this week?')] });
  trace.close();
  const report = hc.check(file);
  assert.equal(report.calls, m.callCount);
  // The summary takes the id of the first message it replaces (langchain 1.5.14): judged against
  // the history before the rewrite, that message was sent changed. Against the rewritten state
  // (the request's messages), nothing would be seen.
  assert.ok(report.violations.some((v) => v.clause === 'TRC-3' && /RetainedOriginalEntryMutated/.test(v.message)), JSON.stringify(report.violations));
});
