#!/usr/bin/env bash
# tests/layering/check_public_symbols.sh - public entry points live only in
# src/api/: no object compiled from outside src/api/ may define or reference
# a weft_* symbol (internal code calls wf_* functions, so the api layer's
# armor never runs twice and lower layers never call upward), and an object
# of src/api/ defines weft_* symbols but references none (U) either: one
# entry point does not call another. A call between two functions of the
# same .c file leaves no symbol; check_public_calls.py looks at the sources
# for those.
# SPDX-License-Identifier: MIT
#
# Usage: check_public_symbols.sh <nm> <object>|<object>|...
# (the objects of the weft_obj library, joined with '|').
set -euo pipefail
nm_tool=$1
IFS='|' read -r -a objects <<< "$2"

api=0
other=0
for o in "${objects[@]}"; do
    case "$o" in
    */src/api/*) api=$((api + 1)) ;;
    *) other=$((other + 1)) ;;
    esac
done
# One nm over every object (-A prefixes each line with its file): one
# process instead of one per object keeps the test fast on a loaded machine.
lines=$("$nm_tool" -A "${objects[@]}" | awk '$NF ~ /^weft_/ {print $1, $(NF-1), $NF}')
api_syms=0
bad=""
while read -r file kind sym; do
    [ -n "${file:-}" ] || continue
    file=${file%:}
    case "$file" in
    */src/api/*)
        api_syms=1
        if [ "$kind" = U ]; then
            bad+="  ${file##*/src/}: $kind $sym"$'\n'
        fi
        ;;
    *) bad+="  ${file##*/src/}: $kind $sym"$'\n' ;;
    esac
done <<< "$lines"

# Guard against a vacuous pass (wrong object list, nm printing nothing).
if [ "$api" -eq 0 ] || [ "$other" -eq 0 ] || [ "$api_syms" -ne 1 ]; then
    echo "check_public_symbols: expected objects inside and outside src/api/ and weft_*" \
         "symbols in src/api/ (got $api api objects, $other others)" >&2
    exit 1
fi
if [ -n "$bad" ]; then
    echo "objects outside src/api/ define or reference weft_* symbols, or objects of" \
         "src/api/ reference them (T: defines, U: calls):" >&2
    printf '%s' "$bad" >&2
    exit 1
fi
echo "ok: $other objects outside src/api/ use no weft_* symbol; $api api objects" \
     "call none"
