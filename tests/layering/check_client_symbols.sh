#!/usr/bin/env bash
# tests/layering/check_client_symbols.sh - a library built on weft's public
# API (weft_remote in src/remote/, weft_transform in src/transform/,
# weft_rollback in src/rollback/) is a
# client like any program: its objects define only their own public
# functions, call weft_* ones and reference no wf_* internal (the static
# inline wrappers of the header-only src/core/atomic.h may appear as local
# symbols of its own objects; referencing one from weft would be an
# undefined symbol, refused like any other); and the core library
# (weft_obj) references nothing of the client, so weft depends on none of
# them (nor on what they link, such as an HTTP server library).
# SPDX-License-Identifier: MIT
#
# Usage: check_client_symbols.sh <nm> <name> <own-regex> <core-forbidden-regex>
#                                <client objects joined by '|'> <weft_obj objects joined by '|'>
#   own-regex:            the public names the client defines (awk ERE)
#   core-forbidden-regex: symbols weft_obj must not reference (awk ERE)
set -euo pipefail
nm_tool=$1
name=$2
own=$3
forbidden=$4
IFS='|' read -r -a client <<< "$5"
IFS='|' read -r -a core <<< "$6"

if [ "${#client[@]}" -eq 0 ] || [ "${#core[@]}" -eq 0 ]; then
    echo "check_client_symbols: $name: no objects given" >&2
    exit 1
fi
report=$("$nm_tool" -A "${client[@]}" | awk -v own="$own" '
    { file = $1; sub(/:$/, "", file); n = split(file, parts, "/"); file = parts[n]
      kind = $(NF-1); sym = $NF }
    sym ~ /^wf_atomic_/ { if (kind != "t") print "bad " file ": " kind " " sym " (weft internal)"; next }
    sym ~ /^wf_/        { print "bad " file ": " kind " " sym " (weft internal)"; next }
    sym ~ own           { if (kind == "T") print "own"; next }
    sym ~ /^weft_/      { if (kind != "U") print "bad " file ": " kind " " sym " (defines a core name)" }')
defined=$(grep -c '^own$' <<< "$report" || true)
bad=$(sed -n 's/^bad /  /p' <<< "$report")
if [ "$defined" -eq 0 ]; then
    echo "check_client_symbols: $name defines none of its public functions (wrong object list?)" >&2
    exit 1
fi
core_bad=$("$nm_tool" -A "${core[@]}" | awk -v re="$forbidden" '$NF ~ re {print "  " $1 " " $NF}')
if [ -n "$core_bad" ]; then
    bad+=$'\n'"core objects reference $name:"$'\n'"$core_bad"
fi
if [ -n "$bad" ]; then
    echo "$name layering broken:" >&2
    printf '%s\n' "$bad" >&2
    exit 1
fi
echo "ok: $name defines $defined public functions and uses only the public API"
