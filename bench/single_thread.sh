#!/usr/bin/env bash
# bench/single_thread.sh - the build without threads (WEFT_THREADS=OFF) against the threaded build on one worker: update and scheduler-dispatch scenarios, ratio per row and a verdict that can fail.
# SPDX-License-Identifier: MIT
#
# Usage: bash bench/single_thread.sh [ROUNDS]     (default 7; about 1 min
#        once both builds exist)
#
# weft_bench's --check compares rows of one run; a row comparing two builds
# does not fit it, so this script builds both (Release, bench only):
#   build/bench-mt   threaded (the default), the executor on one worker
#   build/bench-st   -DWEFT_THREADS=OFF
# and runs `weft_bench --quick update2 update7 sched_empty sched_overhead`
# ROUNDS times in each, alternating builds in ABBA order, so that machine
# noise hits both alike. Rows compared: every update row (2 and 7 systems, plain,
# mixed, no ticks: schedule runs over 100k entities) and every 1-thread
# dispatch row (sched_empty: 1,000 and 6,000 empty systems; N25 overhead
# per system at 10 .. 6,000 systems); the threaded build's 2-thread rows
# have no counterpart. For each row the median over rounds of weft's
# ns/op is taken per build, and the ratio single / threaded printed.
# Target "no slower": the geometric mean of the ratios must be at most
# 1.05; exit 1 otherwise. Single rows are printed but not judged one by
# one: on a shared 2-core machine a row of a --quick run (well under a
# millisecond per repetition) swings by 2x between identical runs, while
# the mean over 14 rows and the median over rounds stay within a few per
# cent.
# Both builds run the same single-threaded executor path, so a miss means
# the build without threads lost something (an OS-layer call, a lock
# that did not compile away), not a different algorithm.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds=${1:-7}
jobs=2
if [ -f .ci/deps.sh ]; then
    . .ci/deps.sh
    jobs=$(weft_jobs)
fi

for side in mt st; do
    threads=ON
    [ "$side" = st ] && threads=OFF
    cmake -S . -B "build/bench-$side" -DCMAKE_BUILD_TYPE=Release -DWEFT_THREADS=$threads \
          -DWEFT_BUILD_TESTS=OFF -DWEFT_BUILD_EXAMPLES=OFF -DWEFT_BUILD_BENCH=ON >/dev/null
    cmake --build "build/bench-$side" -j "$jobs" --target weft_bench >/dev/null
done

out=build/bench-st/compare
rm -rf "$out"
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
    # ABBA order (mt st, st mt, ...): a drift in the machine's load over
    # the run weighs on both builds alike
    order="mt st"
    [ $((r % 2)) = 0 ] && order="st mt"
    for side in $order; do
        echo "round $r/$rounds: $side"
        if ! "build/bench-$side/bench/weft_bench" --quick update2 update7 sched_empty \
                sched_overhead --csv "$out/$side-$r.csv" >"$out/$side-$r.log" 2>&1; then
            cat "$out/$side-$r.log" >&2
            echo "single_thread.sh: weft_bench failed in build/bench-$side" >&2
            exit 1
        fi
    done
done

python3 - "$out" "$rounds" <<'EOF'
import csv, math, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])

def rows(path):
    with open(path) as f:
        lines = [l for l in f if not l.startswith("#")]
    got = {}
    for r in csv.DictReader(lines):
        name = r["scenario"]
        keep = name.startswith("update ") or "1 thread (ns/system)" in name
        if keep:
            got[(name, r["param"])] = float(r["weft"])
    return got

runs = {s: [rows(os.path.join(out, "%s-%d.csv" % (s, i))) for i in range(1, rounds + 1)]
        for s in ("mt", "st")}
keys = sorted(set(runs["mt"][0]) & set(runs["st"][0]))
missing = sorted(set(runs["mt"][0]) ^ set(runs["st"][0]))
if not keys:
    sys.exit("single_thread.sh: no row common to both builds")
if missing:
    sys.exit("single_thread.sh: rows in one build only: %s" % missing)
print("%-58s %12s %12s %7s" % ("row (median of %d rounds, weft ns/op)" % rounds,
                                "threaded", "no threads", "ratio"))
ratios, worst = [], (0.0, "")
for k in keys:
    mt = statistics.median(r[k] for r in runs["mt"])
    st = statistics.median(r[k] for r in runs["st"])
    ratio = st / mt if mt > 0 else float("inf")
    ratios.append(ratio)
    label = k[0] + ("" if k[1] in ("0", "") else " @ " + k[1])
    print("%-58s %12.3f %12.3f %7.3f" % (label[:58], mt, st, ratio))
    if ratio > worst[0]:
        worst = (ratio, label)
gmean = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
ok = gmean <= 1.05
print("geometric mean ratio (no threads / threaded on 1 worker): %.3f (target <= 1.05); "
      "worst row %.3f: %s" % (gmean, worst[0], worst[1]))
print("verdict: %s" % ("PASS" if ok else "MISS"))
sys.exit(0 if ok else 1)
EOF
