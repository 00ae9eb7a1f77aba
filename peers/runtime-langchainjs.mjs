#!/usr/bin/env node
// Runtime peers in Node: LangChain.js v1's own context management judged at every model call of
// a real agent loop (SPEC TRC-13), as peers/runtime.py does for the Python frameworks.
//
// A `createAgent` loop (langchain) on `fakeModel()` (@langchain/core/testing) replaying a seeded
// script: ROUNDS rounds of 1-3 parallel tool calls whose results are 1.6 to 2.7 KB (the tools of
// python/tests/fake_agents.py), then an answer. Under test: `summarizationMiddleware` (its
// summarizer a fake model too), `contextEditingMiddleware` with `ClearToolUsesEdit`, no
// compaction, and ours (`compactionMiddleware` of hybrid-compaction/langchain). Our
// `traceMiddleware`, listed first, records every model call (the history the agent held at its
// `beforeModel`, what the model received) and `check` judges the trace against hard limit
// 12000 o200k tokens and retention 2; each compaction is told to act at 9000 tokens.
//
//     node peers/runtime-langchainjs.mjs            # 36 rounds; rewrites the Node rows of docs/PEERS.md
//     node peers/runtime-langchainjs.mjs --smoke    # CI: 8 rounds at half the budget, no file written;
//                                            # exit 1 unless ours checks clean and every model
//                                            # call was judged
//
// Packages: `langchain` and `@langchain/core` from node/test-harness/node_modules (its pins;
// `npm ci` there), or from --modules DIR; `hybrid-compaction` from there too if installed
// (CI's tarball), else this repository's node/ (the addon built: `npm run build:dev`).

import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { random } from './seeded.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BEGIN = '<!-- runtime peers (Node): written by peers/runtime-langchainjs.mjs; do not edit by hand -->';
const END = '<!-- end of runtime peers (Node) -->';

const args = process.argv.slice(2);
const smoke = args.includes('--smoke');
const at = args.indexOf('--modules');
const modules = at >= 0 ? path.resolve(args[at + 1]) : path.join(ROOT, 'node', 'test-harness', 'node_modules');
const roundsAt = args.indexOf('--rounds');
const ROUNDS = roundsAt >= 0 ? Number(args[roundsAt + 1]) : smoke ? 8 : 36;
// A shorter run compacts at the same relative point: half the budget.
const HARD_LIMIT = smoke ? 6000 : 12000;
const TRIGGER = smoke ? 4500 : 9000;
const RETENTION = 2;
const SEED = 7;

const require = createRequire(path.join(modules, 'runtime-langchainjs.cjs'));
let hcPath;
try {
  hcPath = require.resolve('hybrid-compaction');
} catch {
  hcPath = path.join(ROOT, 'node', 'lib', 'index.cjs');
}
const hc = createRequire(hcPath)(hcPath);
const { compactionMiddleware, traceMiddleware } = createRequire(hcPath)(path.join(path.dirname(hcPath), 'langchain.cjs'));
const { createAgent, tool, summarizationMiddleware, contextEditingMiddleware, ClearToolUsesEdit } = require('langchain');
const { fakeModel } = require('@langchain/core/testing');
const { AIMessage, HumanMessage } = require('@langchain/core/messages');

const SYSTEM_PROMPT = 'You are a research agent. Use the tools, then answer briefly.';
const ANSWER = 'Here is what I found.';

const policy = hc.policy({
  hardLimit: HARD_LIMIT, triggerMargin: HARD_LIMIT - TRIGGER, recentMessageRetentionCount: RETENTION,
  maximumCompactionAttempts: 2, preservationLabel: 'runtime-peers', preservationVersion: 1,
  estimator: 'tokens:o200k_base',
});

/** The agent's model: ROUNDS assistant messages with 1-3 parallel tool calls, then the answer. */
function model(rounds) {
  const rng = random(SEED);
  let m = fakeModel();
  for (let r = 0; r < rounds; r++) {
    const calls = [];
    const n = 1 + Math.floor(rng() * 3);
    for (let k = 0; k < n; k++) {
      const name = rng() < 0.5 ? 'search' : 'fetch';
      const arg = name === 'search' ? 'query' : 'url';
      calls.push({ name, args: { [arg]: `topic ${r}.${k} ✓` }, id: `call_${r}_${k}`, type: 'tool_call' });
    }
    m = m.respond(new AIMessage({ content: rng() < 0.3 ? `Round ${r}: looking things up.` : '', tool_calls: calls }));
  }
  return m.respond(new AIMessage(ANSWER));
}

/** The summarizer's model: always the same summary. */
function summarizer() {
  let m = fakeModel();
  for (let i = 0; i < 200; i++) m = m.respond(new AIMessage('Summary: the agent searched and fetched pages.'));
  return m;
}

const TOOLS = [
  tool(async ({ query }) => `Results for ${query}: ${'über café lorem ipsum dolor sit amet. '.repeat(40)}`, {
    name: 'search', description: 'Searches the web for `query`.',
    schema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  }),
  tool(async ({ url }) => `Page ${url}: ${'the quick brown fox jumps over the lazy dog. '.repeat(60)}`, {
    name: 'fetch', description: 'Fetches the page at `url`.',
    schema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
  }),
];

const CONFIGS = [
  { name: 'none (no compaction), LangChain.js', setting: '`createAgent(...)` without compaction middleware', middleware: () => [] },
  {
    name: 'LangChain.js `summarizationMiddleware`',
    setting: `\`trigger: {tokens: ${TRIGGER}}, keep: {messages: 6}\`, fake summarizer`,
    middleware: () => [summarizationMiddleware({ model: summarizer(), trigger: { tokens: TRIGGER }, keep: { messages: 6 } })],
  },
  {
    name: 'LangChain.js `contextEditingMiddleware(ClearToolUsesEdit)`',
    setting: `\`edits: [new ClearToolUsesEdit({trigger: {tokens: ${TRIGGER}}, keep: {messages: 2}})]\``,
    middleware: () => [contextEditingMiddleware({ edits: [new ClearToolUsesEdit({ trigger: { tokens: TRIGGER }, keep: { messages: 2 } })] })],
  },
  {
    name: 'ours: `compactionMiddleware` (LangChain.js)', ours: true,
    setting: `hard limit ${HARD_LIMIT} o200k tokens, retention ${RETENTION}, no reducer`,
    middleware: (trace) => [compactionMiddleware(policy, { trace, estimator: 'tokens:o200k_base' })],
  },
];

async function runOne(config, dir) {
  const file = path.join(dir, `${CONFIGS.indexOf(config)}.jsonl`);
  const trace = new hc.TraceWriter(file);
  const started = process.hrtime.bigint();
  const agent = createAgent({
    model: model(ROUNDS), tools: TOOLS, systemPrompt: SYSTEM_PROMPT,
    middleware: [traceMiddleware({ policy, trace }), ...config.middleware(trace)],
  });
  const state = await agent.invoke({ messages: [new HumanMessage('Find out about the topics, please.')] }, { recursionLimit: 4 * ROUNDS + 20 });
  trace.close();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const report = hc.check(file);
  const violations = report.violations;
  const clauses = {};
  for (const v of violations) clauses[v.clause] = (clauses[v.clause] ?? 0) + 1;
  return {
    ...config, observed: report.observed, records: report.calls, seconds, clauses,
    answered: state.messages.at(-1).content === ANSWER,
    violating: new Set(violations.filter((v) => v.run && String(v.call).startsWith('model-')).map((v) => `${v.run}/${v.call}`)).size,
    first: violations[0] ?? null,
  };
}

function table(results) {
  const lines = [
    '| compaction under test | setting | model calls checked | calls with a violation | violations by clause | first violating call |',
    '|---|---|---:|---:|---|---|',
  ];
  for (const r of results) {
    const clauses = Object.entries(r.clauses).sort().map(([c, n]) => `${c}: ${n}`).join(', ') || '0';
    const first = r.first ? `\`${r.first.call}\` ${r.first.clause}: ${String(r.first.message).slice(0, 110)}` : 'none';
    const extra = r.records === r.observed ? '' : ` (+ ${r.records - r.observed} full call records)`;
    lines.push(`| ${r.name} | ${r.setting} | ${r.observed}${extra} | ${r.violating} | ${clauses} | ${first} |`);
  }
  return lines.join('\n');
}

/** What the rows show that the clauses alone do not say (only when the run shows it). */
function findings(results) {
  const out = [];
  const summarization = results.find((r) => r.name.includes('summarizationMiddleware'));
  if (summarization.first && String(summarization.first.message).includes('RetainedOriginalEntryMutated')) {
    out.push(`\`summarizationMiddleware\` gives its summary message the id of the first message it replaces (\`id: conversationMessages[0].id\` in its \`beforeModel\`), so at the call that summarizes, that message of the history is sent changed under its own id: TRC-3 \`RetainedOriginalEntryMutated\` (the Python middleware's row above has no violation). From the next call on, the state holds the summary (${summarization.observed - summarization.violating} of its ${summarization.observed} calls check clean).`, '');
  }
  return out;
}

function section(results, elapsed) {
  const version = (p) => JSON.parse(fs.readFileSync(require.resolve(`${p}/package.json`), 'utf8')).version;
  const now = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const ours = results.filter((r) => r.ours);
  const clean = ours.every((r) => Object.keys(r.clauses).length === 0);
  return [
    BEGIN,
    '### LangChain.js (Node)',
    '',
    `Regenerate with \`node peers/runtime-langchainjs.mjs\` after \`cd node/test-harness && npm ci\` and \`cd node && npm run build:dev\` (CI runs \`--smoke\` from the installed tarball: ${8} rounds). Run: ${now} UTC, ${os.arch()} Node ${process.versions.node}; langchain ${version('langchain')}, @langchain/core ${version('@langchain/core')}, hybrid-compaction ${hc.version}; ${elapsed.toFixed(1)} s for all configurations.`,
    '',
    `**Method.** A LangChain.js v1 \`createAgent\` loop on \`fakeModel()\` (\`@langchain/core/testing\`) replaying a seeded script (\`peers/runtime-langchainjs.mjs\`, seed ${SEED}; the same shape as the Python agent's, not the same draws): ${ROUNDS} rounds of 1-3 parallel tool calls with results of 1.6 to 2.7 KB, then an answer, so ${ROUNDS + 1} model calls per run. \`traceMiddleware\` (listed first) records, for every model call, the history the agent held at its \`beforeModel\` (before \`summarizationMiddleware\` rewrites the state) with the system prompt in front, and what the model received (a callback on the request's model); \`check\` judges each call (SPEC TRC-13) against hard limit ${HARD_LIMIT} o200k tokens and retention ${RETENTION}, as the Python rows above. Each compaction is told to act at ${TRIGGER} tokens (LangChain.js counts them approximately); the summarizer is a fake model too.`,
    '',
    table(results),
    '',
    ...findings(results),
    clean ? 'Ours (`compactionMiddleware`): 0 violations (its full call records, replayed by the checker, check clean too).' : '**Ours has violations: this is a bug.**',
    '',
    END,
  ].join('\n');
}

function write(text) {
  const file = path.join(ROOT, 'docs', 'PEERS.md');
  let page = fs.readFileSync(file, 'utf8');
  if (page.includes(BEGIN) && page.includes(END)) {
    page = page.slice(0, page.indexOf(BEGIN)) + text + page.slice(page.indexOf(END) + END.length);
  } else {
    page = `${page.replace(/\n+$/, '')}\n\n${text}\n`;
  }
  fs.writeFileSync(file, page);
  return file;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hc-runtime-langchainjs-'));
const started = process.hrtime.bigint();
const results = [];
for (const c of CONFIGS) results.push(await runOne(c, dir));
const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
console.log(table(results));
const problems = [
  ...results.filter((r) => r.ours && Object.keys(r.clauses).length).map((r) => `${r.name}: ${JSON.stringify(r.clauses)}`),
  ...results.filter((r) => r.observed !== ROUNDS + 1).map((r) => `${r.name}: ${r.observed} calls checked, ${ROUNDS + 1} expected`),
  ...results.filter((r) => !r.answered).map((r) => `${r.name}: the agent did not finish`),
];
if (!smoke) console.log(`wrote ${write(section(results, elapsed))}`);
for (const p of problems) console.error(`runtime peers (Node): ${p}`);
console.error(`runtime peers (Node): ${results.length} configurations, ${elapsed.toFixed(1)} s, ${problems.length ? 'FAILED' : 'ok'}`);
process.exitCode = problems.length ? 1 : 0;
