'use strict';
// The Node half of benches/node_vs_python/run.sh: a Compactor's cold call on a 10 000-message
// history and its repeat call on history + 1, as compact.py times them in Python.
//
//     node compact.cjs MESSAGES RUNS [PACKAGE]
//
// The history is `hc.workload(MESSAGES, {seed: 0, format: 'openai-chat'}).messages` (the same
// messages as Python's), the policy never compacts, the calls are `compactSync` (Python's
// `compact` is synchronous too); for each estimator, the median of RUNS runs of the cold call,
// the repeat call and the repeat call converting the whole transcript (`_reuse: false`), in
// milliseconds, as one JSON line per estimator. PACKAGE: the package's folder (default: node/).
// The event loop turns between two runs (as it does between an agent's calls): the addon's
// memory of a dropped Compactor is given back by finalizers that run there (V8 is told about it,
// so its collector finds it; Python frees it at once, by reference counting).
const path = require('node:path');

const [n, runs] = process.argv.slice(2, 4).map(Number);
const hc = require(process.argv[4] || path.join(__dirname, '..', '..', 'node'));

const POLICY = hc.policy({
  hardLimit: 2 ** 31 - 1, triggerMargin: 1, recentMessageRetentionCount: 2,
  maximumCompactionAttempts: 1, preservationLabel: 'bench', preservationVersion: 1,
});

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function ms(f) {
  const t0 = process.hrtime.bigint();
  f();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

async function times(f) {
  const out = [];
  for (let i = 0; i < runs; i++) {
    out.push(f());
    await turn();
  }
  return median(out);
}

function repeat(msgs, estimator, reuse) {
  const c = new hc.Compactor(POLICY, { estimator, format: 'openai-chat', _reuse: reuse });
  c.compactSync(msgs.slice(0, -1));
  let r;
  const dt = ms(() => { r = c.compactSync(msgs); });
  if (r.messages.length !== msgs.length) throw new Error('the bench policy compacted');
  return dt;
}

(async () => {
  const msgs = hc.workload(n, { seed: 0, format: 'openai-chat' }).messages;
  for (const estimator of ['utf8', 'tokens:o200k_base']) {
    const cold = await times(() => ms(() => new hc.Compactor(POLICY, { estimator, format: 'openai-chat' }).compactSync(msgs)));
    const warm = await times(() => repeat(msgs, estimator, true));
    const whole = await times(() => repeat(msgs, estimator, false));
    console.log(JSON.stringify({ side: 'node', estimator, cold, repeat: warm, whole }));
  }
})();
