'use strict';
// hybrid-compaction/ai-sdk with the real AI SDK (`ai` 7.x) and its own test model
// (MockLanguageModelV4, `ai/test`): a generateText tool loop with large tool results compacts at every
// step (reducing every step over its trigger), every model call is recorded by traceRecorder (the prompt the model received, seen
// by its middleware) and checks clean; a prepareStep that orphans tool results is flagged with
// its TRC clause; a streamText run and a ToolLoopAgent are recorded through the middleware; bad options raise at
// construction.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const hc = require('hybrid-compaction');
const { compactionStep, traceRecorder } = require('hybrid-compaction/ai-sdk');
const { generateText, streamText, ToolLoopAgent, tool, jsonSchema, wrapLanguageModel, isStepCount, simulateReadableStream } = require('ai');
const { MockLanguageModelV4 } = require('ai/test');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hc-ai-sdk-'));
const policy = hc.policy({
  hardLimit: 4000, triggerMargin: 300, recentMessageRetentionCount: 1,
  maximumCompactionAttempts: 2, preservationLabel: 'ai-sdk', preservationVersion: 1,
});
const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
const search = tool({
  description: 'search the web',
  inputSchema: jsonSchema({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }),
  execute: async ({ q }) => `results for ${q}: ${'Zürich, 12°C, rain; '.repeat(120)}`,
});

// The model calls `search` `steps` times, then answers.
function model(steps) {
  const results = [];
  for (let i = 0; i < steps; i++) {
    results.push({ content: [{ type: 'tool-call', toolCallId: `call_${i}`, toolName: 'search', input: JSON.stringify({ q: `q${i}` }) }], finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] });
  }
  results.push({ content: [{ type: 'text', text: 'Done: rain all week.' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] });
  return new MockLanguageModelV4({ doGenerate: results });
}

// Three earlier turns, each with a large tool result: what compaction can drop.
function earlier() {
  const out = [];
  for (let t = 0; t < 3; t++) {
    out.push({ role: 'user', content: `Earlier question ${t}?` });
    out.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: `old_${t}`, toolName: 'search', input: { q: `old${t}` } }] });
    out.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: `old_${t}`, toolName: 'search', output: { type: 'text', value: `old results ${t}: ${'Genève, 15°C, sun; '.repeat(150)}` } }] });
    out.push({ role: 'assistant', content: `Answer ${t}.` });
  }
  return out;
}

// Keeps the system prompt and the last exchange (a call and its result) or the last message,
// a summary of the rest between them. Each step's result is large enough (2.6 kB against a
// 3.7 kB trigger) that the next step compacts again.
function summarizer(calls) {
  return (ms) => {
    calls.push(ms.length);
    const system = ms[0].role === 'system' ? [ms[0]] : [];
    const last = ms.at(-1).role === 'tool' ? ms.slice(-2) : ms.slice(-1);
    return [...system, { role: 'user', content: `Earlier (summary ${calls.length}): sun in Genève.` }, ...last];
  };
}

test('a generateText tool loop compacts at every step; every call recorded and clean', async () => {
  const file = path.join(dir, 'clean.jsonl');
  const trace = new hc.TraceWriter(file);
  const calls = [];
  // The compaction writes its own full call records into the same trace (a run of its own).
  const recorder = traceRecorder({ policy, trace, prepareStep: compactionStep(policy, { reducer: summarizer(calls), trace }) });
  const m = model(3);
  const result = await generateText({
    model: wrapLanguageModel({ model: m, middleware: recorder.middleware }),
    instructions: 'You are brief.',
    messages: [...earlier(), { role: 'user', content: 'Weather in Zürich this week?' }],
    tools: { search },
    stopWhen: isStepCount(10),
    prepareStep: recorder.prepareStep,
  });
  trace.close();
  assert.equal(result.text, 'Done: rain all week.');
  assert.equal(m.doGenerateCalls.length, 4);
  // The reducer ran at every step over the trigger: the first (the earlier turns), then each
  // step holding two large results; the second step held the first's compaction (the SDK
  // carries returned messages forward) and one result, within the limit.
  assert.equal(calls.length, 3, 'a reduction at every step over the trigger');
  const report = hc.check(file);
  assert.equal(report.calls, 4 + 4, 'every model call observed, every step a full call record');
  assert.deepEqual(report.violations, [], JSON.stringify(report.violations));
  const outcomes = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    .filter((r) => r.type === 'call').map((r) => r.diagnostics.outcome);
  assert.deepEqual(outcomes, ['Reduced', 'WithinLimit', 'Reduced', 'Reduced']);
  // The model received the system prompt, the summary and the last exchange.
  const prompt = m.doGenerateCalls.at(-1).prompt;
  assert.deepEqual(prompt.map((p) => p.role), ['system', 'user', 'assistant', 'tool']);
  assert.equal(prompt[0].content, 'You are brief.');
  assert.match(prompt[1].content[0].text, /^Earlier \(summary 3\)/);
  assert.equal(prompt[3].content[0].toolCallId, 'call_2');
});

test('a prepareStep that orphans tool results is flagged with its clause', async () => {
  const file = path.join(dir, 'orphaning.jsonl');
  const trace = new hc.TraceWriter(file);
  // Drops the assistant messages holding calls but keeps their results: the SDK sends it.
  const orphaning = ({ messages }) => ({ messages: messages.filter((msg) => !(msg.role === 'assistant' && Array.isArray(msg.content) && msg.content.some((p) => p.type === 'tool-call'))) });
  const recorder = traceRecorder({ policy, trace, prepareStep: orphaning });
  await generateText({
    model: wrapLanguageModel({ model: model(2), middleware: recorder.middleware }),
    instructions: 'You are brief.',
    prompt: 'Weather?',
    tools: { search },
    stopWhen: isStepCount(10),
    prepareStep: recorder.prepareStep,
  });
  trace.close();
  const report = hc.check(file);
  assert.equal(report.calls, 3);
  const clauses = new Set(report.violations.map((v) => v.clause));
  assert.ok(clauses.has('TRC-3') || clauses.has('TRC-5'), JSON.stringify([...clauses]));
  assert.deepEqual([...new Set(report.violations.map((v) => v.call))].sort(), ['model-2', 'model-3']);
});

test('the history is recorded before the prepareStep it wraps: a rewritten question is flagged', async () => {
  const file = path.join(dir, 'rewriting.jsonl');
  const trace = new hc.TraceWriter(file);
  // Replaces the user's question (the required last message) with another.
  const rewriting = ({ messages }) => ({ messages: [...messages.slice(0, -1), { role: 'user', content: 'Something else?' }] });
  const recorder = traceRecorder({ policy, trace, prepareStep: rewriting });
  await generateText({
    model: wrapLanguageModel({ model: model(0), middleware: recorder.middleware }),
    prompt: 'Weather?',
    prepareStep: recorder.prepareStep,
  });
  trace.close();
  const report = hc.check(file);
  assert.equal(report.calls, 1);
  assert.ok(report.violations.some((v) => v.clause === 'TRC-4'), JSON.stringify(report.violations));
});

test('a streamText run is recorded through the middleware', async () => {
  const file = path.join(dir, 'stream.jsonl');
  const trace = new hc.TraceWriter(file);
  const chunks = (parts) => ({ stream: simulateReadableStream({ chunks: [{ type: 'stream-start', warnings: [] }, ...parts] }) });
  const finish = (unified) => ({ type: 'finish', finishReason: { unified, raw: undefined }, usage });
  const m = new MockLanguageModelV4({
    doStream: [
      chunks([{ type: 'tool-call', toolCallId: 's1', toolName: 'search', input: '{"q":"Zürich"}' }, finish('tool-calls')]),
      chunks([{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'Regen.' }, { type: 'text-end', id: 't' }, finish('stop')]),
    ],
  });
  const calls = [];
  const recorder = traceRecorder({ policy, trace, prepareStep: compactionStep(policy, { reducer: summarizer(calls) }) });
  const result = streamText({
    model: wrapLanguageModel({ model: m, middleware: recorder.middleware }),
    instructions: 'You are brief.',
    messages: [...earlier(), { role: 'user', content: 'Wetter?' }],
    tools: { search },
    stopWhen: isStepCount(5),
    prepareStep: recorder.prepareStep,
  });
  assert.equal(await result.text, 'Regen.');
  trace.close();
  assert.equal(m.doStreamCalls.length, 2);
  const report = hc.check(file);
  assert.equal(report.calls, 2);
  assert.deepEqual(report.violations, [], JSON.stringify(report.violations));
  assert.ok(calls.length >= 1);
});

test('media the model receives unchanged keep their history ids (images, files, URLs, data URLs)', async () => {
  const file = path.join(dir, 'media.jsonl');
  const trace = new hc.TraceWriter(file);
  // Every message required (retention 20): a sent message whose id is not its history id is
  // a TRC-4 violation.
  const all = hc.policy({ ...policy, recentMessageRetentionCount: 20 });
  const recorder = traceRecorder({ policy: all, trace });
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
  const m = new MockLanguageModelV4({
    supportedUrls: { 'image/*': [/^https:/], 'application/pdf': [/^https:/] },
    doGenerate: { content: [{ type: 'text', text: 'Ein Pixel.' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] },
  });
  await generateText({
    model: wrapLanguageModel({ model: m, middleware: recorder.middleware }),
    instructions: [{ role: 'system', content: 'Sei kurz.', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } }],
    messages: [
      { role: 'user', content: [
        { type: 'text', text: 'Was siehst du? 👀' },
        { type: 'image', image: new Uint8Array(png) },
        { type: 'image', image: new URL('https://example.com/a.png') },
        { type: 'file', data: `data:image/png;base64,${png.toString('base64')}`, mediaType: 'image/png' },
        { type: 'file', data: 'https://example.com/plan.pdf', mediaType: 'application/pdf', filename: 'plan.pdf' },
        { type: 'text', text: '' }] },
      { role: 'assistant', content: [{ type: 'reasoning', text: 'Bilder.' }, { type: 'text', text: 'Vier Dateien.' }] },
      { role: 'user', content: 'Und?' },
    ],
    prepareStep: recorder.prepareStep,
  });
  trace.close();
  const report = hc.check(file);
  assert.equal(report.calls, 1);
  assert.deepEqual(report.violations, [], JSON.stringify(report.violations));
});

test('a ToolLoopAgent takes the same prepareStep and middleware', async () => {
  const file = path.join(dir, 'agent.jsonl');
  const trace = new hc.TraceWriter(file);
  const calls = [];
  const recorder = traceRecorder({ policy, trace, prepareStep: compactionStep(policy, { reducer: summarizer(calls) }) });
  const m = model(2);
  const agent = new ToolLoopAgent({
    model: wrapLanguageModel({ model: m, middleware: recorder.middleware }),
    instructions: 'You are brief.', tools: { search }, stopWhen: isStepCount(10), prepareStep: recorder.prepareStep,
  });
  const result = await agent.generate({ messages: [...earlier(), { role: 'user', content: 'Wetter?' }] });
  trace.close();
  assert.equal(result.text, 'Done: rain all week.');
  const report = hc.check(file);
  assert.equal(report.calls, 3);
  assert.deepEqual(report.violations, [], JSON.stringify(report.violations));
  assert.ok(calls.length >= 1);
});

test('two recorders on one trace are two runs, each judged on its own', async () => {
  const file = path.join(dir, 'two.jsonl');
  const trace = new hc.TraceWriter(file);
  for (let i = 0; i < 2; i++) {
    const recorder = traceRecorder({ policy, trace });
    await generateText({
      model: wrapLanguageModel({ model: model(1), middleware: recorder.middleware }),
      prompt: 'Weather?', tools: { search }, stopWhen: isStepCount(5), prepareStep: recorder.prepareStep,
    });
  }
  trace.close();
  const report = hc.check(file);
  assert.equal(report.calls, 4);
  assert.deepEqual(report.violations, [], JSON.stringify(report.violations));
  const runs = new Set(fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).run).filter(Boolean));
  assert.equal(runs.size, 2);
});

test('fromAISDK converts ModelMessages, binary data included', () => {
  const entries = hc.fromAISDK([
    { role: 'system', content: 'Sei kurz.' },
    { role: 'user', content: [{ type: 'text', text: 'Was ist das?' }, { type: 'image', image: new Uint8Array([137, 80, 78, 71]), mediaType: 'image/png' }] },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'f', input: { a: 1 } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'f', output: { type: 'json', value: { ok: true } } }] },
  ]);
  assert.deepEqual(entries.map((e) => [e.kind, e.role]), [['SystemInstruction', 'system'], ['ConversationalMessage', 'user'], ['ToolExchange', 'assistant'], ['ToolExchange', 'tool']]);
  assert.throws(() => hc.fromAISDK([{ role: 'bot', content: 'x' }]), (e) => e instanceof hc.TranscriptError && e.path === 'messages[0].role');
  // A URL is its text; a cycle is refused with its path, not a stack overflow.
  const [file] = hc.fromAISDK([{ role: 'user', content: [{ type: 'file', data: new URL('https://x/y.pdf'), mediaType: 'application/pdf' }] }]);
  assert.deepEqual(file.parts[0].block.json.data, 'https://x/y.pdf');
  const cyclic = { role: 'user', content: [{ type: 'text', text: 'x' }] };
  cyclic.content[0].self = cyclic;
  assert.throws(() => hc.fromAISDK([cyclic]), (e) => e instanceof hc.TranscriptError && /cycle/.test(e.message) && e.path.startsWith('messages[0].content[0].self'));
});

test('bad options raise at construction with a clear message', () => {
  assert.throws(() => compactionStep(null), /compactionStep needs a policy object/);
  assert.throws(() => compactionStep({ hardLimit: 1 }), /compactionStep: the policy lacks triggerMargin/);
  assert.throws(() => compactionStep(policy, { reducer: 'summarize' }), /reducer must be a function, got string/);
  assert.throws(() => compactionStep(policy, { trace: {} }), /trace must be a TraceWriter/);
  assert.throws(() => traceRecorder({ policy }), /traceRecorder needs \{trace: a TraceWriter\}/);
  const trace = new hc.TraceWriter(path.join(dir, 'bad.jsonl'));
  assert.throws(() => traceRecorder({ policy, trace, prepareStep: 5 }), /prepareStep must be a function/);
  assert.throws(() => traceRecorder({ policy, trace, run: 5 }), /run must be a non-empty string, got number/);
  trace.close();
});
