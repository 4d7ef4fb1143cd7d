#!/usr/bin/env bash
# bench/plot.sh - turns weft_bench --csv output into PNG charts (gnuplot).
# SPDX-License-Identifier: MIT
#
# Usage: bash bench/plot.sh RESULTS.csv [OUTDIR]     (OUTDIR: docs/img)
# Charts: ns per entity vs N (log-log) for every swept scenario, weft beside
# its baseline; the N13 fragmentation curve; the N15 Changed curve.
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
    *) if [ "$rows" -ge 4 ]; then plot "$f" "$title" "N (entities)"; fi ;;
    esac
done < "$tmp/index.tsv"
echo "plot: charts in $out"
