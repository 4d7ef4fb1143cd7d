#!/usr/bin/env bash
# tests/fuzz/coverage.sh - which lines of the library a fuzz corpus reaches:
# builds the target's replay executable with clang's source-based coverage
# (-fprofile-instr-generate -fcoverage-mapping) into build/fuzz-cov, replays
# the corpus directories through it, and prints llvm-cov's per-file report
# for src/ (or for the files given in WEFT_COV_FILES), then, for each
# function named in WEFT_COV_FUNCS, its lines with their execution counts.
# SPDX-License-Identifier: MIT
#
# Usage: tests/fuzz/coverage.sh TARGET [CORPUS_DIR...]
#   CORPUS_DIRs default to tests/fuzz/corpus/TARGET and
#   tests/fuzz/regressions/TARGET; a long run's grown corpus is
#   build/fuzz-work/TARGET/corpus (tests/fuzz/run_long.sh).
# Environment: WEFT_COV_BUILD (default build/fuzz-cov), WEFT_COV_FILES
# (space-separated source files, default src/), WEFT_COV_FUNCS
# (space-separated function names to print line by line).
# Example: WEFT_COV_FUNCS="check_rel_graph parse_schd" \
#          tests/fuzz/coverage.sh fuzz_snapshot build/fuzz-work/fuzz_snapshot/corpus
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
t=${1:?usage: coverage.sh TARGET [CORPUS_DIR...]}
shift
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=("tests/fuzz/corpus/$t" "tests/fuzz/regressions/$t")
b=${WEFT_COV_BUILD:-build/fuzz-cov}
flags="-fprofile-instr-generate -fcoverage-mapping"

CC=clang CXX=clang++ cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Debug -DWEFT_WERROR=OFF \
    -DWEFT_BUILD_TESTS=ON -DWEFT_BUILD_BENCH=OFF -DWEFT_BUILD_EXAMPLES=OFF \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
    -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$b" -j 2 --target "${t}_replay" >/dev/null
exe=$(find "$b" -type f -name "${t}_replay" -perm -u+x | head -n 1)
[ -n "$exe" ] || { echo "coverage: no ${t}_replay built in $b" >&2; exit 1; }

rm -f "$b/$t".*.profraw "$b/$t.profdata"
LLVM_PROFILE_FILE="$b/$t.%p.profraw" "$exe" "${dirs[@]}" >/dev/null
llvm-profdata merge -o "$b/$t.profdata" "$b/$t".*.profraw
read -r -a files <<<"${WEFT_COV_FILES:-src/}"
llvm-cov report "$exe" -instr-profile="$b/$t.profdata" "${files[@]}"
for f in ${WEFT_COV_FUNCS:-}; do
    echo "== $f"
    llvm-cov show "$exe" -instr-profile="$b/$t.profdata" -name="$f" -show-line-counts
done
