#!/usr/bin/env bash
# Node versus Python: the same compaction calls from each binding, release builds of both, on
# the same machine in one run (docs/PERFORMANCE.md, "Node versus Python").
#
#     benches/node_vs_python/run.sh [--no-build] [MESSAGES=10000] [RUNS=5]
#
# Builds (unless --no-build) the Python wheel with `maturin build --release` into a venv of its
# own (target/py: python3 -m venv, maturin from PyPI) and the Node addon with
# `npm run build:release` (napi build --release; node/node_modules from `npm ci`), then runs
# compact.py and compact.cjs twice each, interleaved (python, node, python, node), and prints
# one table: per estimator, the cold call (a new compactor on MESSAGES messages) and the repeat
# call on history + 1, the median of RUNS runs in each process, and Node's time over Python's.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=1
if [ "${1:-}" = "--no-build" ]; then build=0; shift; fi
messages=${1:-10000}
runs=${2:-5}
py=target/py
if [ "$build" = 1 ]; then
  [ -x "$py/bin/python" ] || python3 -m venv "$py"
  "$py/bin/pip" install -q --disable-pip-version-check "maturin==1.16.0"
  rm -rf "$py/wheels"
  CARGO_TARGET_DIR=target "$py/bin/maturin" build --release -m python/Cargo.toml -i "$py/bin/python" -o "$py/wheels"
  "$py/bin/pip" install -q --disable-pip-version-check --force-reinstall "$py"/wheels/hybrid_compaction-*.whl
  (cd node && npm run build:release)
fi
echo "uptime: $(uptime)"
echo "$(node --version), $("$py/bin/python" --version), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs"
out=$(mktemp)
for round in 1 2; do
  (cd benches/node_vs_python && "../../$py/bin/python" compact.py "$messages" "$runs") >>"$out"
  node benches/node_vs_python/compact.cjs "$messages" "$runs" >>"$out"
done
node - "$out" "$messages" "$runs" <<'JS'
const fs = require('node:fs');
const [file, messages, runs] = process.argv.slice(2);
const rows = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const f = (x) => x.toFixed(1);
console.log(`\n${messages} messages (hc.workload(${messages}, seed 0), OpenAI chat), medians of ${runs} per process, rounds 1 / 2:\n`);
console.log('| estimator | call | Python | Node | Node / Python | Python, whole conversion | Node, whole conversion |');
console.log('|---|---|---:|---:|---:|---:|---:|');
for (const est of [...new Set(rows.map((r) => r.estimator))]) {
  const side = (s) => rows.filter((r) => r.side === s && r.estimator === est);
  const [p, n] = [side('python'), side('node')];
  for (const call of ['cold', 'repeat']) {
    const ratio = p.map((r, i) => (n[i][call] / r[call]).toFixed(2)).join(' / ');
    const whole = (rs) => (call === 'repeat' ? rs.map((r) => f(r.whole)).join(' / ') + ' ms' : '');
    console.log(`| ${est} | ${call === 'cold' ? 'cold' : 'repeat, history + 1'} | ${p.map((r) => f(r[call])).join(' / ')} ms | ${n.map((r) => f(r[call])).join(' / ')} ms | ${ratio} | ${whole(p)} | ${whole(n)} |`);
  }
}
JS
rm -f "$out"
