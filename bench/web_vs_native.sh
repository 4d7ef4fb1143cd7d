#!/usr/bin/env bash
# bench/web_vs_native.sh - weft_bench_web natively and as WebAssembly under node: the two side by side, with a verdict.
# SPDX-License-Identifier: MIT
#
# Usage: bench/web_vs_native.sh NATIVE_EXE WASM_JS [N [REPS]]
#   e.g. bench/web_vs_native.sh build/release/examples/web/weft_bench_web \
#        build/release/web-st/examples/web/weft_bench_web.js
# Prints, per scenario (spawn, iter), ns per entity of weft and of the
# plain-C baseline on each engine, weft/plain on each, and web/native for
# both. Verdict (exit 3 when missed): on the web, a query pass costs at most
# twice the plain-C loop over two arrays (weft/plain <= 2 for iter): the
# column layout must survive the trip to WebAssembly. Spawn and the
# web/native ratios are reported without a target: they measure the engine
# (docs/platforms.md explains what bounds them).
set -euo pipefail
native=$1
wasm=$2
n=${3:-1000000}
reps=${4:-7}
nout=$("$native" "$n" "$reps")
wout=$(node --no-experimental-fetch "$wasm" "$n" "$reps")
echo "$nout" | head -1
echo "$wout" | head -1
printf '%-6s %12s %12s %12s %12s %10s %10s %12s %12s\n' scenario "native weft" "native plain" \
       "web weft" "web plain" "nat w/p" "web w/p" "web/nat weft" "web/nat plain"
status=0
for s in spawn iter; do
    read -r nw np < <(echo "$nout" | awk -v s="$s" '$1=="bench" && $2==s {print $4, $6}')
    read -r ww wp < <(echo "$wout" | awk -v s="$s" '$1=="bench" && $2==s {print $4, $6}')
    line=$(awk -v nw="$nw" -v np="$np" -v ww="$ww" -v wp="$wp" 'BEGIN {
        printf "%12.3f %12.3f %12.3f %12.3f %10.2f %10.2f %12.2f %12.2f", nw, np, ww, wp,
               nw / np, ww / wp, ww / nw, wp / np }')
    printf '%-6s %s\n' "$s" "$line"
    if [ "$s" = iter ] && ! awk -v ww="$ww" -v wp="$wp" 'BEGIN { exit !(ww / wp <= 2) }'; then
        echo "MISSED: iter: on the web a query pass costs more than twice the plain loop"
        status=3
    fi
done
[ "$status" -eq 0 ] && echo "verdict: met (web iter weft/plain <= 2)"
exit "$status"
