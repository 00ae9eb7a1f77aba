// Runtime peers in Node: a real AI SDK agent loop (`generateText` of `ai` 7.x, the version pinned
// in node/package.json, on its own MockLanguageModelV4), every model call recorded by
// hybrid-compaction/ai-sdk's traceRecorder (the history before the prepareStep under test, the
// prompt the model received) and judged by `check` (SPEC TRC-13), as peers/runtime.py does for
// the Python frameworks. Prints one Markdown row per configuration (docs/PEERS.md, "Runtime in
// Node").
//
// Run from the repository root after building the addon (cd node && npm ci && npm run build:dev):
//   node peers/runtime-ai-sdk.mjs [--rounds N]
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { random } from './seeded.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const require = createRequire(path.join(root, 'node', 'package.json'));
const hc = require('hybrid-compaction');
const { compactionStep, traceRecorder } = require('hybrid-compaction/ai-sdk');
const { generateText, pruneMessages, tool, jsonSchema, wrapLanguageModel, isStepCount } = require('ai');
const { MockLanguageModelV4 } = require('ai/test');

const ROUNDS = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 36;
const policy = hc.policy({
  hardLimit: 12000, triggerMargin: 1000, recentMessageRetentionCount: 2, maximumCompactionAttempts: 2,
  preservationLabel: 'runtime-node', preservationVersion: 1, estimator: 'tokens:o200k_base',
});

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

// ROUNDS rounds of 1-3 parallel calls, then an answer; results of 1.6 to 2.7 KB (seed 7).
function script() {
  const r = random(7);
  const steps = [];
  const sizes = new Map();
  for (let i = 0; i < ROUNDS; i++) {
    const n = 1 + Math.floor(r() * 3);
    const content = [];
    for (let k = 0; k < n; k++) {
      const id = `call_${i}_${k}`;
      sizes.set(id, 1600 + Math.floor(r() * 1100));
      content.push({ type: 'tool-call', toolCallId: id, toolName: 'search', input: JSON.stringify({ q: `topic ${i}.${k}` }) });
    }
    steps.push({ content, finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] });
  }
  steps.push({ content: [{ type: 'text', text: 'Done.' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] });
  return { steps, sizes };
}

async function run(name, setting, makeInner) {
  const { steps, sizes } = script();
  const model = new MockLanguageModelV4({ doGenerate: steps });
  const search = tool({
    description: 'search the web',
    inputSchema: jsonSchema({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }),
    execute: async ({ q }, { toolCallId }) => `results for ${q}: ${'Zürich 12°C rain, Genève 15°C sun. '.repeat(60)}`.slice(0, sizes.get(toolCallId)),
  });
  const file = path.join(os.tmpdir(), `hc-runtime-ai-sdk-${process.pid}-${name.replace(/\W+/g, '-')}.jsonl`);
  const trace = new hc.TraceWriter(file);
  const recorder = traceRecorder({ policy, trace, prepareStep: makeInner(trace) });
  await generateText({
    model: wrapLanguageModel({ model, middleware: recorder.middleware }),
    instructions: 'You are a research assistant. Use the search tool, then answer briefly.',
    prompt: 'Collect the weather for every topic, then answer.',
    tools: { search },
    stopWhen: isStepCount(ROUNDS + 5),
    prepareStep: recorder.prepareStep,
  });
  trace.close();
  const report = hc.check(file);
  const full = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.startsWith('{"type":"call"')).length;
  fs.unlinkSync(file);
  const byCall = new Map();
  const byClause = new Map();
  for (const v of report.violations) {
    byClause.set(v.clause, (byClause.get(v.clause) ?? new Set()).add(v.call));
    if (!byCall.has(v.call)) byCall.set(v.call, v);
  }
  const clauses = [...byClause].sort().map(([c, calls]) => `${c}: ${calls.size}`).join(', ') || '0';
  const first = [...byCall.values()][0];
  const firstText = first ? `\`${first.call}\` ${first.clause}: ${String(first.message).slice(0, 90)}` : 'none';
  const checked = full ? `${report.calls - full} (+ ${full} full call records)` : `${report.calls}`;
  return `| ${name} | ${setting} | ${checked} | ${byCall.size} | ${clauses} | ${firstText} |`;
}

const configurations = [
  ['none (no compaction)', '`generateText(...)` without `prepareStep`', () => undefined],
  ['AI SDK `pruneMessages` (tool calls)', "`prepareStep`: `pruneMessages({messages, toolCalls: 'before-last-2-messages'})`",
    () => ({ messages }) => ({ messages: pruneMessages({ messages, toolCalls: 'before-last-2-messages' }) })],
  ['AI SDK `pruneMessages` (everything before the last message)', "`toolCalls: 'before-last-message', reasoning: 'before-last-message'`",
    () => ({ messages }) => ({ messages: pruneMessages({ messages, toolCalls: 'before-last-message', reasoning: 'before-last-message' }) })],
  // Its own full call records go into the same trace (a run of their own), checked too.
  ['ours: `compactionStep` (AI SDK)', 'hard limit 12000 o200k tokens, retention 2, no reducer', (trace) => compactionStep(policy, { trace })],
];

const started = Date.now();
const rows = [];
for (const [name, setting, makeInner] of configurations) rows.push(await run(name, setting, makeInner));
const { version } = require('ai/package.json');
console.log(`ai ${version}, Node ${process.version}, ${ROUNDS} rounds, ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log('| compaction under test | setting | model calls checked | calls with a violation | violations by clause | first violating call |');
console.log('|---|---|---:|---:|---|---|');
for (const r of rows) console.log(r);
