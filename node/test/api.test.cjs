'use strict';
// The package's API: every answer from the library, bad input refused at the boundary with
// the package's errors (path and kind), both entry points, the types matching the addon.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const hc = require('hybrid-compaction');
const native = require('hybrid-compaction/native');
const { ROOT } = require('./repo.cjs');

const P = hc.policy({
  hardLimit: 100, triggerMargin: 10, recentMessageRetentionCount: 1,
  maximumCompactionAttempts: 1, preservationLabel: 'demo', preservationVersion: 1,
});

test('verify answers the library\'s verification; a typed error is a SpecError', () => {
  const original = hc.fromOpenAI([{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }]);
  assert.equal(hc.verify(original, original.map((e) => e.id), P).outcome, 'Accepted');
  const dropped = hc.verify(original, [original[1].id], P);
  assert.equal(dropped.outcome, 'Rejected');
  assert.deepEqual(dropped.missingRequiredEntryIds, [original[0].id]);
  assert.throws(() => hc.verify(original, [], { ...P, hardLimit: -1 }), (e) => {
    assert.ok(e instanceof hc.SpecError && e instanceof hc.HybridCompactionError && e instanceof Error);
    assert.equal(e.kind, 'OutOfRange');
    return true;
  });
});

test('run answers what the command answers; a typed error is an answer', () => {
  const out = hc.run({ op: 'policy', policy: { ...P, hardLimit: 0 } });
  assert.ok(out.error, JSON.stringify(out));
  assert.deepEqual(hc.run(JSON.stringify({ op: 'evaluate', policy: P, entries: [] })).evaluation.estimatedSize, 0);
});

test('invalid input is an InvalidCaseError naming the path, before anything runs', () => {
  const cases = [
    [{ op: 'verify', policy: { ...P, hardLimit: NaN } }, '$.policy.hardLimit', /NaN/],
    [{ op: 'verify', policy: { ...P, hardLimit: 2n } }, '$.policy.hardLimit', /BigInt/],
    [{ op: 'verify', policy: P, original: [undefined] }, '$.original[0]', /undefined/],
    [{ op: 'verify', policy: P, original: new Map() }, '$.original', /a Map/],
    [{ op: 'verify', policy: { ...P, 'hard limit': () => 1 } }, '$.policy["hard limit"]', /a function/],
    [{ op: 'verify', policy: { ...P, hardLimit: 'x' }, original: [], proposed: [] }, '$.policy.hardLimit', /32-bit integer/],
    ['{"op": "nope"}', '$.op', /./],
    [[], '$', /an array/],
  ];
  for (const [c, at, why] of cases) {
    assert.throws(() => hc.run(c), (e) => {
      assert.ok(e instanceof hc.InvalidCaseError, `${at}: ${e}`);
      assert.equal(e.path, at);
      assert.match(e.reason, why);
      assert.equal(e.message, `${e.path}: ${e.reason}`);
      return true;
    });
  }
  const cyclic = { op: 'verify' };
  cyclic.policy = cyclic;
  assert.throws(() => hc.run(cyclic), { name: 'InvalidCaseError', path: '$.policy', reason: /cycle/ });
  let deep = [];
  for (let i = 0; i < 200; i++) deep = [deep];
  assert.throws(() => hc.run({ op: 'verify', original: deep }), { reason: /nested deeper than 128/ });
  assert.throws(() => hc.run({ op: 'verify' }, 'fast'), TypeError);
  assert.throws(() => hc.verify('abc', [], P), /original must be an array/);
  assert.throws(() => hc.policy({ hardLimit: 1 }), /triggerMargin is required/);
});

test('the converters answer the library\'s entries; a refusal has kind, path and reason', () => {
  const entries = hc.fromAnthropic([{ role: 'user', content: 'héllo 👋' }], 'sys');
  assert.deepEqual(entries.map((e) => [e.kind, e.role]), [['SystemInstruction', 'system'], ['ConversationalMessage', 'user']]);
  assert.equal(entries[1].parts[0].text, 'héllo 👋');
  const r = hc.fromOpenAIResponses([{ type: 'message', role: 'user', content: 'hi' }], 'be brief');
  assert.equal(r.length, 2);
  const lc = hc.fromLangChain([{ lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'HumanMessage'], kwargs: { content: 'hi' } }]);
  assert.equal(lc[0].role, 'user');
  assert.throws(() => hc.fromOpenAI([{ role: 'user', content: 42 }]), (e) => {
    assert.ok(e instanceof hc.TranscriptError);
    assert.equal(e.kind, 'InvalidArgument');
    assert.match(e.path, /^messages\[0\]/);
    return true;
  });
  // SPEC TRN-11: a spoken reply the provider keeps cannot be sent back as given.
  assert.throws(() => hc.fromOpenAI([{ role: 'assistant', content: '', audio: { id: 'a1' } }]), (e) => {
    assert.ok(e instanceof hc.UnsupportedContentError && e instanceof hc.TranscriptError);
    assert.equal(e.kind, 'NotSupported');
    assert.equal(e.path, 'messages[0].audio');
    return true;
  });
  const image = hc.fromOpenAI([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:,' } }] }]);
  assert.equal(image[0].parts[0].block.tokens, 1445);
  assert.throws(() => hc.fromOpenAI([{ role: 'user', content: NaN }]), { name: 'TranscriptError', path: 'messages[0].content' });
  assert.throws(() => hc.fromOpenAI('hi'), TypeError);
  assert.equal(hc.fromOpenAI([{ role: 'user', content: 'a' }], { ids: ['u1'] })[0].id, 'u1');
});

test('check reads text, records and files; a violation names its clause', () => {
  const example = path.join(ROOT, 'docs', 'trace-example.jsonl');
  const text = fs.readFileSync(example, 'utf8');
  const fromFile = hc.check(example);
  assert.deepEqual(fromFile.violations, []);
  assert.ok(fromFile.calls > 0);
  assert.deepEqual(hc.check(text), fromFile);
  assert.deepEqual(hc.check(text.trim().split('\n').map((l) => JSON.parse(l)), { implementation: 'engine' }).violations, []);
  assert.throws(() => hc.check('{"not": "a header"}\n'), { name: 'InvalidCaseError', path: 'line 1' });
  assert.throws(() => hc.check(path.join(os.tmpdir(), 'no-such-trace.jsonl')), { name: 'InvalidCaseError', path: 'file' });
  assert.throws(() => hc.check([{ a: NaN }]), { path: '$[0].a' });
  assert.throws(() => hc.check(42), TypeError);
});

test('schema, countTokens, workload', () => {
  assert.deepEqual(Object.keys(hc.schema()).sort(), ['case', 'output', 'vectorFile']);
  assert.equal(hc.schema('trace').$schema, 'https://json-schema.org/draft/2020-12/schema');
  assert.throws(() => hc.schema('nope'), TypeError);
  assert.deepEqual(hc.countTokens(['hello world', '']), [2, 0]);
  assert.ok(hc.countTokens(['héllo wörld 👋'], 'cl100k_base')[0] > 3);
  assert.throws(() => hc.countTokens(['a'], 'p50k'), /encoding must be/);
  assert.throws(() => hc.countTokens('abc'), TypeError);
  assert.throws(() => hc.countTokens([1]), /texts\[0\] must be a string/);
  const w = hc.workload(20, { seed: 3, format: 'anthropic-messages' });
  assert.equal(w.format, 'anthropic-messages');
  assert.throws(() => hc.workload(20, { format: 'nope' }), { name: 'InvalidCaseError', path: 'format' });
  assert.throws(() => hc.workload(-1), { path: 'messages' });
});

test('the ES module entry point exports the same functions', async () => {
  const esm = await import('hybrid-compaction');
  for (const [name, value] of Object.entries(hc)) assert.equal(esm[name], value, name);
  assert.equal(esm.default, hc);
});

test('versions agree; the committed types declare exactly the addon\'s functions', () => {
  const pkg = require('hybrid-compaction/package.json');
  assert.equal(hc.version, pkg.version);
  const dts = fs.readFileSync(require.resolve('hybrid-compaction/native').replace(/index\.cjs$/, 'index.d.ts'), 'utf8');
  const declared = [...dts.matchAll(/export declare (?:function|class) (\w+)/g)].map((m) => m[1]).sort();
  const exported = Object.keys(native).filter((k) => typeof native[k] === 'function').sort();
  assert.deepEqual(declared, exported);
  const api = fs.readFileSync(require.resolve('hybrid-compaction').replace(/index\.cjs$/, 'index.d.ts'), 'utf8');
  for (const name of Object.keys(hc)) assert.match(api, new RegExp(`\\b${name}\\b`), `lib/index.d.ts declares ${name}`);
});
