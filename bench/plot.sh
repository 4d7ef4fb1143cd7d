#!/usr/bin/env bash
# bench/plot.sh - turns weft_bench --csv output into PNG charts (gnuplot).
# SPDX-License-Identifier: MIT
#
# Usage: bash bench/plot.sh RESULTS.csv [OUTDIR]     (OUTDIR: docs/img)
# Charts: ns per entity vs N (log-log) for every swept scenario, weft beside
# its baseline; the N13 fragmentation curve; the N15 Changed curve; the N26
# par-iter break-even (par_break_even.png) and the N25 scheduler overhead
# (sched_overhead.png).
# gnuplot comes from Debian (package gnuplot-nox); when it is missing it is
# installed with apt-get as root or through sudo (as .ci/deps.sh does);
# when neither works the script says so and skips the charts.
set -euo pipefail

csv=${1:?usage: plot.sh RESULTS.csv [OUTDIR]}
out=${2:-$(cd "$(dirname "$0")/.." && pwd)/docs/img}

if ! command -v gnuplot >/dev/null 2>&1; then
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo=(sudo)
        elif command -v sudo >/dev/null 2>&1 && [ -t 0 ]; then
            sudo=(sudo)
        else
            echo "plot: gnuplot missing and neither root nor sudo; run 'apt-get install -y gnuplot-nox'; skipping charts" >&2
            exit 0
        fi
    fi
    if ! ${sudo[@]+"${sudo[@]}"} apt-get update -q || ! ${sudo[@]+"${sudo[@]}"} apt-get install -y -q gnuplot-nox; then
        echo "plot: apt-get install gnuplot-nox failed; skipping charts" >&2
        exit 0
    fi
fi
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One data file per scenario name: "param weft baseline".
awk -v dir="$tmp" '
    /^#/ || /^scenario,/ { next }
    {
        # the quoted name may hold commas: split the rest only
        q = index(substr($0, 2), "\"")
        name = substr($0, 2, q - 1)
        split(substr($0, q + 3), part, ",")
        $2 = part[1]; $4 = part[3]; $5 = part[4]
        file = name; gsub(/[^A-Za-z0-9]+/, "_", file)
        print $2, $4, $5 > (dir "/" file ".dat")
        titles[file] = name
    }
    END { for (f in titles) print f "\t" titles[f] > (dir "/index.tsv") }
' "$csv"

plot() { # file title xlabel logx
    local f=$1 title=$2 xlabel=$3
    gnuplot <<GP
set terminal pngcairo size 800,500 noenhanced font ",10"
set output "$out/$f.png"
set title "$title"
set xlabel "$xlabel"
set ylabel "ns per entity"
set logscale x 2
set logscale y
set grid
set key top right
plot "$tmp/$f.dat" using 1:2 with linespoints title "weft", \
     "$tmp/$f.dat" using 1:3 with linespoints title "baseline"
GP
}

while IFS=$'\t' read -r f title; do
    rows=$(wc -l < "$tmp/$f.dat")
    case "$title" in
    N13\ fragmentation*) plot "$f" "$title (baseline: one flat array)" "archetypes" ;;
    N15*) plot "$f" "$title (baseline: unfiltered pass)" "percent changed" ;;
    memory*|N9*|N10*|N11*|N1*) ;; # single points: tables in docs/benchmarks.md
    N24*|N25*|N26*|sched_*|par_iter*) ;; # scheduler: the two charts below
    *) if [ "$rows" -ge 4 ]; then plot "$f" "$title" "N (entities)"; fi ;;
    esac
done < "$tmp/index.tsv"

# N26 par-iter break-even: speedup of par_each on 2 threads over the same
# system on 1 thread (baseline / weft), one line per kernel weight and split.
n26=()
while IFS=$'\t' read -r f title; do
    case "$title" in N26*) n26+=("$f"$'\t'"${title#N26 par_each 2 vs 1 thread, }") ;; esac
done < <(sort -t $'\t' -k 2 "$tmp/index.tsv")
if [ "${#n26[@]}" -gt 0 ]; then
    cmd=""
    for entry in "${n26[@]}"; do
        f=${entry%%$'\t'*}; t=${entry#*$'\t'}
        dash=1; case "$t" in *min_rows*) dash=2 ;; esac
        lc=1; case "$t" in medium*) lc=2 ;; heavy*) lc=3 ;; esac
        cmd+="${cmd:+, }\"$tmp/$f.dat\" using 1:(\$3/\$2) with linespoints lc $lc dt $dash title \"$t\""
    done
    gnuplot <<GP
set terminal pngcairo size 900,500 noenhanced font ",10"
set output "$out/par_break_even.png"
set title "N26 par_each break-even: speedup on 2 threads over the same system on 1 thread"
set xlabel "N (entities, one table)"
set ylabel "speedup (1-thread time / 2-thread time)"
set logscale x 2
set format x "2^%L"
set yrange [0:2.2]
set grid
set key outside right top
plot $cmd, 1 with lines lc rgb "black" dt 3 title "break-even (1x)", 2 with lines lc rgb "gray" dt 3 title "ideal (2x)"
GP
fi

# N25 scheduler overhead: ns per empty system vs the number of systems.
n25_1=""; n25_2=""
while IFS=$'\t' read -r f title; do
    case "$title" in
    N25*1\ thread*) n25_1=$f ;;
    N25*2\ threads*) n25_2=$f ;;
    esac
done < "$tmp/index.tsv"
if [ -n "$n25_1" ] && [ -n "$n25_2" ]; then
    gnuplot <<GP
set terminal pngcairo size 800,500 noenhanced font ",10"
set output "$out/sched_overhead.png"
set title "N25 scheduler overhead: empty systems with disjoint access, one run"
set xlabel "systems in the schedule"
set ylabel "ns per system (per run)"
set logscale x
set logscale y
set grid
set key top right
plot "$tmp/$n25_1.dat" using 1:2 with linespoints title "weft, 1 thread", \
     "$tmp/$n25_2.dat" using 1:2 with linespoints title "weft, 2-thread pool (fork/join included)", \
     "$tmp/$n25_1.dat" using 1:3 with linespoints title "baseline: call through a function pointer", \
     50 with lines dt 3 lc rgb "black" title "target 1 thread (50 ns)", \
     150 with lines dt 3 lc rgb "gray" title "target 2 threads (150 ns)"
GP
fi
echo "plot: charts in $out"
