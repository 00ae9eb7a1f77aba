'use strict';
// A Compactor's kept conversions (docs/NODE.md, "Repeat calls"; node/src/reuse.rs): a repeat
// call converts only the messages its witness cannot prove unchanged, and answers exactly what
// converting the whole transcript answers. The addon's converter is counted by wrapping the
// native method the package calls.
const test = require('node:test');
const assert = require('node:assert/strict');
const hc = require('hybrid-compaction');
const native = require('hybrid-compaction/native');

const policy = hc.policy({
  hardLimit: 400, triggerMargin: 60, recentMessageRetentionCount: 1,
  maximumCompactionAttempts: 2, preservationLabel: 'reuse', preservationVersion: 1,
});

function conversation(n) {
  const out = [{ role: 'system', content: 'Be brief.' }];
  for (let i = 0; out.length < n; i++) {
    out.push({ role: 'user', content: `Question ${i}?` });
    out.push({ role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'f', arguments: `{"i":${i}}` } }] });
    out.push({ role: 'tool', tool_call_id: `c${i}`, content: `result ${i} `.repeat(8) });
    out.push({ role: 'assistant', content: 'ok' });
  }
  return out.slice(0, n);
}

/** Runs `f` counting the messages the addon converts one by one. */
function counting(f) {
  const original = native.Session.prototype.adapt;
  let converted = 0;
  native.Session.prototype.adapt = function adapt(format, indices, text) {
    converted += indices.length;
    return original.call(this, format, indices, text);
  };
  try {
    return { value: f(), converted };
  } finally {
    native.Session.prototype.adapt = original;
  }
}

const summarize = (ms) => [ms[0], { role: 'assistant', content: 'Earlier: questions answered.' }, ms[ms.length - 1]];

/** What a call answers, comparable across the two paths (kept messages by identity). */
function answer(r) {
  return { outcome: r.outcome, messages: r.messages, assembly: r.assembly, diagnostics: r.diagnostics };
}

function same(a, b) {
  assert.equal(a.outcome, b.outcome);
  assert.deepEqual(a.assembly, b.assembly);
  assert.deepEqual(a.diagnostics, b.diagnostics);
  assert.equal(a.messages.length, b.messages.length);
  a.messages.forEach((m, i) => (typeof m === 'object' && b.messages[i] !== m ? assert.deepEqual(m, b.messages[i]) : assert.equal(m, b.messages[i])));
}

test('a repeat call converts only its new or changed messages', () => {
  const c = new hc.Compactor(policy, { estimator: 'tokens:o200k_base' });
  const h = conversation(9);
  assert.equal(counting(() => c.compactSync(h)).converted, 9);
  assert.equal(counting(() => c.compactSync(h)).converted, 0, 'the same objects, unchanged');
  const next = [...h, { role: 'user', content: 'And now?' }];
  assert.equal(counting(() => c.compactSync(next)).converted, 1, 'history + 1');
  const moved = [next[0], ...next.slice(5), ...next.slice(1, 5)];
  assert.equal(counting(() => c.compactSync(moved)).converted, 0, 'moved messages are the same objects');
  // edits in place, at any depth, are seen; an equal copy is a new object
  next[1].content = 'Question zero?';
  next[2].tool_calls[0].function.arguments = '{"i":100}';
  next[3].extra = undefined; // absent, as JSON reads it: unchanged
  next[4] = { ...next[4] };
  const edited = counting(() => c.compactSync(next));
  assert.equal(edited.converted, 3);
  next[5].content = 1;
  next[5].content = 'Question 1?';
  assert.equal(counting(() => c.compactSync(next)).converted, 0, 'a value set back to the same string');
  next[6].tool_calls[0].function = { ...next[6].tool_calls[0].function, name: 'g' };
  assert.equal(counting(() => c.compactSync(next)).converted, 1, 'a nested object replaced');
});

test('the session keeps the conversions of its last call: messages left out of one call are converted again', () => {
  const c = new hc.Compactor(policy);
  const whole = new hc.Compactor(policy, { _reuse: false });
  const h = conversation(8);
  assert.equal(counting(() => c.compactSync(h)).converted, 8);
  assert.equal(counting(() => c.compactSync(h.slice(0, 5))).converted, 0);
  const again = counting(() => c.compactSync(h));
  assert.equal(again.converted, 3, 'the three left out were dropped by the session');
  same(answer(again.value), answer(whole.compactSync(h)));
  assert.equal(counting(() => c.compactSync(h)).converted, 0);
  // the same object twice in one call: one conversion, kept for both
  const twice = [...h, h[1]];
  assert.equal(counting(() => c.compactSync(twice)).converted, 0);
  same(answer(c.compactSync(twice)), answer(whole.compactSync(twice)));
});

test('kept conversions answer exactly what converting the whole transcript answers', async () => {
  const reducer = (ms) => summarize(ms);
  const kept = new hc.Compactor(policy, { reducer });
  const whole = new hc.Compactor(policy, { reducer, _reuse: false });
  const h = conversation(6);
  const steps = [
    (x) => x,
    (x) => [...x, { role: 'user', content: 'Question 0?' }], // equal to an earlier one: CLS-2's counter
    (x) => [x[0], { role: 'user', content: 'Question 0?' }, ...x.slice(1)], // its ids move
    (x) => x.slice(0, 5),
    (x) => { x[1].content = 'Question zero, changed?'; return x; }, // in place: its id is its content's
    (x) => [...x, ...conversation(12).slice(5)], // over the trigger: the reducer runs
  ];
  let cur = h;
  for (const step of steps) {
    cur = step(cur);
    same(answer(kept.compactSync(cur)), answer(whole.compactSync(cur)));
    same(answer(await kept.compact(cur, { overrides: { 1: 'Summary' } })), answer(await whole.compact(cur, { overrides: { 1: 'Summary' } })));
  }
  // Anthropic's system: converted every call, its entry first
  const a = new hc.Compactor(policy, { format: 'anthropic-messages' });
  const w = new hc.Compactor(policy, { format: 'anthropic-messages', _reuse: false });
  const msgs = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }];
  for (const system of ['Be brief.', 'Be very brief.']) {
    same(answer(a.compactSync(msgs, { system })), answer(w.compactSync(msgs, { system })));
  }
});

test('refusals are the whole conversion\'s, with their paths', () => {
  const c = new hc.Compactor(policy);
  const h = conversation(4);
  c.compactSync(h);
  const expect = (messages, options, check) => {
    let kept;
    let whole;
    try { c.compactSync(messages, options); } catch (e) { kept = e; }
    try { new hc.Compactor(policy, { _reuse: false }).compactSync(messages, options); } catch (e) { whole = e; }
    assert.ok(kept && whole, 'both refuse');
    assert.equal(kept.name, whole.name);
    assert.equal(kept.path, whole.path);
    assert.equal(kept.message, whole.message);
    check(kept);
  };
  expect([...h, { role: 'user', content: 42 }], {}, (e) => assert.equal(e.path, 'messages[4].content'));
  expect([...h, { role: 'user', content: NaN }], {}, (e) => assert.equal(e.name, 'InvalidCaseError'));
  expect(h, { overrides: { 3: 'Summary' } }, (e) => assert.equal(e.name, 'TranscriptError'));
  h[1].content = [{ type: 'text' }]; // an edit in place the converter refuses
  expect(h, {}, (e) => assert.match(e.path, /^messages\[1\]/));
});

test('LangChain message objects: their toDict() is the witness\'s value', () => {
  const { HumanMessage, AIMessage } = require('@langchain/core/messages');
  const c = new hc.Compactor(policy, { format: 'langchain' });
  const h = [new HumanMessage({ content: 'hi', id: 'h1' }), new AIMessage({ content: 'hello', id: 'a1' })];
  assert.equal(counting(() => c.compactSync(h)).converted, 2);
  assert.equal(counting(() => c.compactSync(h)).converted, 0);
  h[1].content = 'hello there';
  const r = counting(() => c.compactSync(h));
  assert.equal(r.converted, 1);
  assert.equal(r.value.messages[1], h[1]);
});
