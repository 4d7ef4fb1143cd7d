#!/usr/bin/env bash
# tests/layering/check_os_layer.sh - every thread, lock and clock call of
# the core library goes through the OS layer (src/core/os.h).
# SPDX-License-Identifier: MIT
#
# Usage: check_os_layer.sh <nm> <src dir> <threads 0|1> <object>|<object>|...
# (the objects of the weft_obj library, joined with '|').
#
# Two checks, each able to fail:
#  1. Sources: no file of src/ outside the OS layer includes a platform
#     header. Allowed everywhere: the C standard library's headers and the
#     libraries weft is built with (xxhash, stb_ds, jansson, zstd). The OS
#     layer is src/core/os_posix.c (threads, locks, clock, log) and
#     src/core/alloc.c (the default allocator hook); src/module/module.c
#     (reloadable modules: dlopen, inotify) is the documented POSIX-only
#     module. src/remote/ is a separate library with its own threads.
#  2. Objects: no object outside those files references a pthread, clock,
#     sleep or yield function (nm -u), so nothing bypasses the table even
#     through a header that reaches them indirectly. With threads 0 (the
#     build without threads) no object at all may reference pthread_*.
set -euo pipefail
nm_tool=$1
src=$2
threads=$3
IFS='|' read -r -a objects <<< "$4"

std='assert|complex|ctype|errno|fenv|float|inttypes|iso646|limits|locale|math|setjmp|signal'
std+='|stdalign|stdarg|stdatomic|stdbool|stddef|stdint|stdio|stdlib|stdnoreturn|string'
std+='|tgmath|threads|time|uchar|wchar|wctype'
deps='xxhash|stb/stb_ds|jansson|zstd|zstd_errors'
allowed_files='core/os_posix.c|core/alloc.c|module/module.c'

bad=""
nfiles=0
while IFS= read -r -d '' f; do
    rel=${f#"$src"/}
    case "$rel" in remote/*) continue ;; esac
    nfiles=$((nfiles + 1))
    if [[ "$rel" =~ ^($allowed_files)$ ]]; then
        continue
    fi
    while IFS= read -r line; do
        hdr=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<([^>]+)>.*/\1/' <<< "$line")
        hdr=${hdr%.h}
        # <threads.h> and <time.h> are C11, but they are the OS: only the
        # OS layer may use them.
        if [[ "$hdr" == threads || "$hdr" == time ]] || ! [[ "$hdr" =~ ^($std|$deps)$ ]]; then
            bad+="  $rel: $line"$'\n'
        fi
    done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*<' "$f" || true)
done < <(find "$src" -name '*.[ch]' -print0)

if [ "$nfiles" -lt 20 ]; then
    echo "check_os_layer: found only $nfiles source files under $src" >&2
    exit 1
fi
if [ -n "$bad" ]; then
    echo "check_os_layer: platform headers outside the OS layer (src/core/os.h):" >&2
    printf '%s' "$bad" >&2
    exit 1
fi

# 2. undefined references, one nm over every object
os_funcs='pthread_[a-z_]+|clock_gettime|clock_nanosleep|nanosleep|usleep|sleep|sched_yield|sysconf|thrd_[a-z_]+|mtx_[a-z_]+|cnd_[a-z_]+|timespec_get'
lines=$("$nm_tool" -A -u "${objects[@]}" | awk '{print $1, $NF}')
seen_os=0
badsym=""
while read -r file sym; do
    [ -n "${file:-}" ] || continue
    file=${file%:}
    sym=${sym%%@*}
    [[ "$sym" =~ ^($os_funcs)$ ]] || continue
    case "$file" in
    */src/core/os_posix.c.o | */os_posix.c.o)
        seen_os=1
        if [ "$threads" = 0 ] && [[ "$sym" == pthread_* ]]; then
            badsym+="  ${file##*/src/}: $sym (built without threads)"$'\n'
        fi
        ;;
    */src/module/module.c.o | */src/core/alloc.c.o) ;;
    *) badsym+="  ${file##*/src/}: $sym"$'\n' ;;
    esac
done <<< "$lines"
if [ "$seen_os" -ne 1 ]; then
    echo "check_os_layer: os_posix.c.o references no OS function (wrong object list?)" >&2
    exit 1
fi
if [ -n "$badsym" ]; then
    echo "check_os_layer: objects calling the OS past the OS layer:" >&2
    printf '%s' "$badsym" >&2
    exit 1
fi
echo "check_os_layer: $nfiles sources and ${#objects[@]} objects use the OS only through src/core/os.h"
