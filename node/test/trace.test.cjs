'use strict';
// TraceWriter: the calls of a Compactor as call records and the provider calls of any system as
// observed records (SPEC TRC-13), checked by the library's checker: a conforming run is clean,
// an orphaning one is flagged with its clause.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const hc = require('hybrid-compaction');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hc-trace-'));
const policy = hc.policy({
  hardLimit: 800, triggerMargin: 100, recentMessageRetentionCount: 1,
  maximumCompactionAttempts: 2, preservationLabel: 'travel', preservationVersion: 1,
});
const call = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Zürich"}' } }] };
const result = { role: 'tool', tool_call_id: 'c1', content: 'Zürich: 12°C, rain. '.repeat(30) };
const history = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather?' }, call, result, { role: 'user', content: 'And tomorrow?' }];

test('every call of a Compactor is recorded and checks clean, on both implementations', async () => {
  const file = path.join(dir, 'compactor.jsonl');
  const trace = new hc.TraceWriter(file);
  const c = new hc.Compactor(policy, { trace, reducer: async (ms) => [ms[0], { role: 'assistant', content: 'Earlier: rain.' }, ms.at(-1)] });
  for (const n of [2, 4, 5]) await c.compact(history.slice(0, n));
  c.close();
  trace.close();
  for (const implementation of hc.IMPLEMENTATIONS) {
    const report = hc.check(file, { implementation });
    assert.equal(report.calls, 3);
    assert.deepEqual(report.violations, [], JSON.stringify(report.violations));
  }
  assert.throws(() => trace.observe(history, history), { name: 'TraceWriteError' });
});

test('an observed call that orphans a tool result is flagged with its TRC clause', () => {
  const file = path.join(dir, 'observed.jsonl');
  const trace = new hc.TraceWriter(file, { content: true });
  assert.equal(trace.observe(history, history, { policy }), 'model-1');
  assert.equal(trace.observe(history, history.filter((m) => m !== call), { policy }), 'model-2');
  trace.endRun();
  trace.close();
  const report = hc.check(file);
  assert.equal(report.calls, 2);
  assert.ok(report.violations.length > 0);
  for (const v of report.violations) {
    assert.match(v.clause, /^TRC-\d+$/);
    assert.equal(v.call, 'model-2');
  }
});

test('bad input to the writer is refused with its place, nothing written', () => {
  assert.throws(() => new hc.TraceWriter(path.join(dir, 'no', 'such', 'dir.jsonl')), { name: 'TraceWriteError' });
  const file = path.join(dir, 'bad.jsonl');
  const trace = new hc.TraceWriter(file);
  const before = fs.readFileSync(file, 'utf8');
  assert.throws(() => trace.observe([{ role: 'user', content: 42 }], null), (e) => e instanceof hc.TranscriptError && e.path.startsWith('history.messages[0]'));
  assert.throws(() => trace.observe(history, history, { dispatch: 'maybe' }), { name: 'InvalidCaseError', path: 'dispatch' });
  assert.throws(() => trace.observe(history, history, { policy: { ...policy, hardLimit: 'x' } }), { name: 'InvalidCaseError', path: 'policy.hardLimit' });
  assert.equal(fs.readFileSync(file, 'utf8'), before);
  assert.equal(trace.observe(history, null, { dispatch: 'failed' }), 'model-1');
  trace.close();
  assert.throws(() => new hc.Compactor(policy, { trace: {} }), TypeError);
});
