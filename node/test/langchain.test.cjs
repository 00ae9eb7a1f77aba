'use strict';
// LangChain.js messages (@langchain/core, pinned in test-harness/) through the existing
// `langchain` format (SPEC TRN-4): message objects, their toDict() and their JSON
// serialization ({lc: 1, type: "constructor", ...}) read alike; compaction gives back the
// caller's own message objects.
const test = require('node:test');
const assert = require('node:assert/strict');
const hc = require('hybrid-compaction');
const { HumanMessage, AIMessage, ToolMessage, SystemMessage } = require('@langchain/core/messages');

const history = () => [
  new SystemMessage('Be brief.'),
  new HumanMessage({ content: 'Weather in Zürich?', id: 'h1' }),
  new AIMessage({ content: '', tool_calls: [{ name: 'weather', args: { city: 'Zürich' }, id: 'c1', type: 'tool_call' }], id: 'a1' }),
  new ToolMessage({ content: '12°C and rain. '.repeat(40), tool_call_id: 'c1', id: 't1' }),
  new AIMessage({ content: 'Rain.', id: 'a2' }),
  new HumanMessage({ content: 'And tomorrow?', id: 'h2' }),
];

test('objects, toDict() and JSON serialization read alike', () => {
  const h = history();
  const fromObjects = hc.fromLangChain(h);
  assert.deepEqual(hc.fromLangChain(h.map((m) => m.toDict())), fromObjects);
  assert.deepEqual(hc.fromLangChain(JSON.parse(JSON.stringify(h))), fromObjects);
  assert.deepEqual(fromObjects.map((e) => [e.id, e.kind]).slice(1), [
    ['h1', 'ConversationalMessage'], ['a1', 'ToolExchange'], ['t1', 'ToolExchange'],
    ['a2', 'ConversationalMessage'], ['h2', 'ConversationalMessage'],
  ]);
});

test('compaction of LangChain.js messages: the caller\'s objects back, the reducer\'s summary', async () => {
  const h = history();
  const summary = new AIMessage({ content: 'Earlier: rain in Zürich.', id: 's1' });
  const policy = hc.policy({
    hardLimit: 400, triggerMargin: 50, recentMessageRetentionCount: 1,
    maximumCompactionAttempts: 2, preservationLabel: 'lc', preservationVersion: 1,
  });
  const result = await hc.compact(h, policy, { reducer: async (ms) => [ms[0], summary, ms.at(-1)] });
  assert.equal(result.format, 'langchain');
  assert.equal(result.outcome, 'Reduced');
  assert.deepEqual(result.messages, [h[0], summary, h[5]]);
  assert.equal(result.messages[1], summary);
  assert.equal(result.messages[2], h[5]);
  // Dropping the call of a kept result is refused: the required messages only.
  const careless = await hc.compact(h, policy, { reducer: (ms) => ms.filter((m) => m.id !== 'a1') });
  assert.equal(careless.outcome, 'PreservationFallback');
});
