'use strict';
// compact and Compactor with JavaScript reducers, sync and async: the library's node decides,
// the reducer is never trusted, kept messages come back as the caller's own objects.
const test = require('node:test');
const assert = require('node:assert/strict');
const hc = require('hybrid-compaction');

const history = () => [
  { role: 'system', content: 'You are a travel agent. Be brief.' },
  { role: 'user', content: 'Weather in Paris tomorrow?' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
  { role: 'tool', tool_call_id: 'call_1', content: 'Paris: 18°C and sunny all week. '.repeat(20) },
  { role: 'assistant', content: '18°C and sunny.' },
  { role: 'user', content: 'And in Rome?' },
];

const small = hc.policy({
  hardLimit: 300, triggerMargin: 50, recentMessageRetentionCount: 1,
  maximumCompactionAttempts: 2, preservationLabel: 'travel', preservationVersion: 1,
});

const summarize = (ms) => [ms[0], { role: 'assistant', content: 'Earlier: Paris will be 18°C and sunny.' }, ms[ms.length - 1]];

test('a sync reducer: reduced, kept messages are the caller\'s objects, the summary the reducer\'s', async () => {
  const h = history();
  let seen;
  const reducer = (ms) => {
    seen = ms;
    const out = summarize(ms);
    reducer.summary = out[1];
    return out;
  };
  for (const run of [async () => hc.compactSync(h, small, { reducer }), () => hc.compact(h, small, { reducer })]) {
    const result = await run();
    assert.equal(result.outcome, 'Reduced');
    assert.equal(result.messages.length, 3);
    assert.equal(result.messages[0], h[0]);
    assert.equal(result.messages[2], h[5]);
    assert.equal(result.messages[1], reducer.summary);
    assert.ok(result.diagnostics.finalSize <= 300);
    assert.ok(result.events.length > 0);
  }
  assert.equal(seen[0], h[0], 'the reducer gets the caller\'s own objects');
});

test('an async reducer is awaited', async () => {
  const h = history();
  const result = await hc.compact(h, small, {
    reducer: async (ms) => {
      await new Promise((r) => setTimeout(r, 5));
      return summarize(ms);
    },
  });
  assert.equal(result.outcome, 'Reduced');
  assert.equal(result.messages[0], h[0]);
  assert.throws(() => hc.compactSync(h, small, { reducer: async (ms) => ms }), (e) => {
    assert.ok(e instanceof hc.SpecError);
    assert.equal(e.kind, 'ReducerFailed');
    assert.match(e.cause.message, /use compact\(\)/);
    return true;
  });
});

test('the reducer is never trusted: an orphaning answer falls back, a throw is ReducerFailed with its cause', async () => {
  const h = history();
  const careless = (ms) => ms.filter((m) => !m.tool_calls);
  const fallback = await hc.compact(h, small, { reducer: careless });
  assert.equal(fallback.outcome, 'PreservationFallback');
  for (const m of fallback.messages) assert.ok(h.includes(m));
  const boom = new Error('summarizer down');
  await assert.rejects(hc.compact(h, small, { reducer: () => { throw boom; } }), (e) => {
    assert.ok(e instanceof hc.SpecError);
    assert.equal(e.kind, 'ReducerFailed');
    assert.equal(e.cause, boom);
    return true;
  });
  await assert.rejects(hc.compact(h, small, { reducer: () => null }), { name: 'SpecError', kind: 'ReducerContract' });
  await assert.rejects(hc.compact(h, small, { reducer: () => [{ role: 'user', content: NaN }] }), (e) => e.kind === 'ReducerFailed' && /NaN/.test(e.cause.message));
});

test('a budget the required messages exceed terminates: nothing may be sent', async () => {
  const tiny = { ...small, hardLimit: 40, triggerMargin: 5 };
  await assert.rejects(hc.compact(history(), tiny, { reducer: summarize }), (e) => {
    assert.ok(e instanceof hc.CompactionTerminated);
    assert.equal(e.outcome, 'Irreducible');
    assert.equal(e.hardLimit, 40);
    assert.ok(e.finalSize > 40);
    return true;
  });
});

test('a Compactor keeps its memo: a repeat call on history + 1 measures the new message only', async () => {
  const c = new hc.Compactor(small, { reducer: summarize, estimator: 'tokens:o200k_base' });
  const h = history().slice(0, 2);
  await c.compact(h);
  const before = c.memoStats.misses;
  const next = [...h, { role: 'assistant', content: 'Let me check.' }];
  const [a, b] = await Promise.all([c.compact(next), c.compact(next)]);
  assert.equal(a.messages[2], next[2]);
  assert.equal(b.outcome, 'WithinLimit');
  assert.equal(c.memoStats.misses, before + 1);
});

test('bad arguments are refused at construction, with the package\'s errors', () => {
  assert.throws(() => new hc.Compactor(small, { reducer: 'no' }), TypeError);
  assert.throws(() => new hc.Compactor({ ...small, hardLimit: 'x' }), { name: 'InvalidCaseError', path: 'policy.hardLimit' });
  assert.throws(() => new hc.Compactor({ ...small, hardLimit: 0 }), { name: 'SpecError' });
  assert.throws(() => new hc.Compactor(small, { format: 'xml' }), TypeError);
  assert.throws(() => hc.compactSync('hi', small), TypeError);
  assert.throws(() => hc.compactSync([{ role: 'user', content: 42 }], small), { name: 'TranscriptError' });
});

test('Anthropic with a system: the system is kept and given back, not the reducer\'s', async () => {
  const msgs = [
    { role: 'user', content: 'Weather in Paris tomorrow? ' + 'x'.repeat(400) },
    { role: 'assistant', content: 'Sunny.' },
    { role: 'user', content: 'And in Rome?' },
  ];
  let seen;
  const result = await hc.compact(msgs, small, {
    system: 'Be brief.',
    reducer: (ms) => {
      seen = ms;
      return [{ role: 'assistant', content: 'Earlier: sunny.' }, ms[ms.length - 1]];
    },
  });
  assert.equal(result.format, 'anthropic-messages');
  assert.equal(seen.length, 3);
  assert.equal(result.system, 'Be brief.');
  assert.equal(result.messages[result.messages.length - 1], msgs[2]);
});

test('compactSync while a compact() is pending is refused, not a deadlock; memoStats answers', async () => {
  let release;
  const held = new Promise((r) => { release = r; });
  const c = new hc.Compactor(small, { reducer: async (ms) => { await held; return summarize(ms); } });
  const pending = c.compact(history());
  assert.throws(() => c.compactSync(history()), /still pending: await it before compactSync/);
  assert.throws(() => c.close(), /still pending/);
  // read beside the session, while its call holds it (waiting for the reducer)
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(typeof c.memoStats.misses, 'number');
  release();
  assert.equal((await pending).outcome, 'Reduced');
  assert.equal(c.compactSync(history().slice(0, 2)).outcome, 'WithinLimit');
});

test('a turn (SPEC TRN-23) is kept whole: a reducer that keeps part of it gets the caller\'s objects of all of it', async () => {
  const items = [
    { role: 'user', content: 'Wetter in Zürich? '.repeat(10) },
    { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA' },
    { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'weather', arguments: '{"city":"Zürich"}' },
    { type: 'function_call_output', call_id: 'c1', output: '12 °C' },
    { role: 'user', content: 'Und morgen?' },
  ];
  const policy = hc.policy({
    hardLimit: 200, triggerMargin: 10, recentMessageRetentionCount: 1,
    maximumCompactionAttempts: 1, preservationLabel: 'turns', preservationVersion: 1,
  });
  const result = await hc.compact(items, policy, { reducer: (ms) => ms.slice(2), format: 'openai-responses' });
  assert.equal(result.outcome, 'Reduced');
  assert.deepEqual(result.messages, items.slice(1));
  result.messages.forEach((m, i) => assert.equal(m, items[i + 1]));
});
