#!/usr/bin/env bash
# tests/layering/check_remote_symbols.sh - weft_remote (src/remote/) is a
# client of weft's public API: its objects may define only weft_remote_*
# public functions, may call weft_* functions but never wf_* internals,
# and the core library (weft_obj) must not reference anything of
# an HTTP server library (MHD_*) or of weft_remote, so weft keeps no network
# dependency.
# SPDX-License-Identifier: MIT
#
# Usage: check_remote_symbols.sh <nm> <remote objects joined by '|'> <weft_obj objects joined by '|'>
set -euo pipefail
nm_tool=$1
IFS='|' read -r -a remote <<< "$2"
IFS='|' read -r -a core <<< "$3"

if [ "${#remote[@]}" -eq 0 ] || [ "${#core[@]}" -eq 0 ]; then
    echo "check_remote_symbols: no objects given" >&2
    exit 1
fi
bad=""
defined=0
while read -r file kind sym; do
    [ -n "${file:-}" ] || continue
    case "$sym" in
    wf_*) bad+="  ${file##*/}: $kind $sym (weft internal)"$'\n' ;;
    weft_remote_*) [ "$kind" = T ] && defined=$((defined + 1)) ;;
    weft_*) [ "$kind" = U ] || bad+="  ${file##*/}: $kind $sym (defines a core name)"$'\n' ;;
    esac
done < <("$nm_tool" -A "${remote[@]}" | awk '{print $1, $(NF-1), $NF}')
if [ "$defined" -eq 0 ]; then
    echo "check_remote_symbols: no weft_remote_* function defined (wrong object list?)" >&2
    exit 1
fi
core_bad=$("$nm_tool" -A "${core[@]}" | awk '$NF ~ /^(MHD_|weft_remote_|wr_)/ {print "  " $1 " " $NF}')
if [ -n "$core_bad" ]; then
    bad+="core objects reference the remote or libmicrohttpd:"$'\n'"$core_bad"$'\n'
fi
if [ -n "$bad" ]; then
    echo "weft_remote layering broken:" >&2
    printf '%s' "$bad" >&2
    exit 1
fi
echo "ok: weft_remote defines $defined weft_remote_* functions and uses only the public API"
