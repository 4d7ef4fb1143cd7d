#!/usr/bin/env bash
# tests/transform/check_transform_symbols.sh - weft_transform (src/transform/)
# is a client of weft's public API: its objects define only
# weft_transform_* and weft_affine_* public functions, call weft_* ones,
# and reference no wf_* internal (the static inline wrappers of the
# header-only src/core/atomic.h may appear as local symbols of its own
# objects; referencing one from weft would be an undefined symbol, which
# is refused like any other); weft_obj references nothing of it.
# SPDX-License-Identifier: MIT
#
# Usage: check_transform_symbols.sh <nm> <transform objects joined by '|'> <weft_obj objects joined by '|'>
set -euo pipefail
nm_tool=$1
IFS='|' read -r -a xf <<< "$2"
IFS='|' read -r -a core <<< "$3"
if [ "${#xf[@]}" -eq 0 ] || [ "${#core[@]}" -eq 0 ]; then
    echo "check_transform_symbols: no objects given" >&2
    exit 1
fi
bad=""
defined=0
while read -r file kind sym; do
    [ -n "${file:-}" ] || continue
    case "$sym" in
    wf_atomic_*) [ "$kind" = t ] || bad+="  ${file##*/}: $kind $sym (weft internal)"$'\n' ;;
    wf_*) bad+="  ${file##*/}: $kind $sym (weft internal)"$'\n' ;;
    weft_transform_*|weft_affine_*) [ "$kind" = T ] && defined=$((defined + 1)) ;;
    weft_*) [ "$kind" = U ] || bad+="  ${file##*/}: $kind $sym (defines a core name)"$'\n' ;;
    esac
done < <("$nm_tool" -A "${xf[@]}" | awk '{print $1, $(NF-1), $NF}')
if [ "$defined" -eq 0 ]; then
    echo "check_transform_symbols: no weft_transform_* function defined (wrong object list?)" >&2
    exit 1
fi
core_bad=$("$nm_tool" -A "${core[@]}" | awk '$NF ~ /^(weft_transform_|weft_affine_|wxf_)/ {print "  " $1 " " $NF}')
if [ -n "$core_bad" ]; then
    bad+="core objects reference the transform library:"$'\n'"$core_bad"$'\n'
fi
if [ -n "$bad" ]; then
    echo "weft_transform layering broken:" >&2
    printf '%s' "$bad" >&2
    exit 1
fi
echo "ok: weft_transform defines $defined public functions and uses only the public API"
