#!/usr/bin/env python3
# tests/layering/check_public_calls.py - no code of the weft library calls
# a public entry point: inside every function body and macro definition of
# src/ (src/api/ included), no name declared WEFT_API in include/weft.h may
# appear, called or taken as a pointer. The api layer checks arguments and
# forwards to internal wf_* functions; an internal path through a public
# function would run its armor twice and, from a lower layer, call upward.
#
# The allowed clients of the public API are the separate libraries built
# on top of libweft (CMakeLists.txt): src/remote/ (weft_remote),
# src/transform/ (weft_transform) and src/rollback/ (weft_rollback); they
# are skipped.
#
# Source level on purpose: a call between two functions of one .c file
# leaves no undefined symbol for nm to see (check_public_symbols.sh covers
# the objects). Comments, string and character literals are blanked first,
# so a message naming a public function is no call.
# SPDX-License-Identifier: MIT
#
# Usage: check_public_calls.py <include/weft.h> <src dir>
import os
import re
import sys

# Separate libraries built on libweft: clients of the public API.
CLIENTS = ("remote", "transform", "rollback")


def public_names(header):
    text = open(header, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return set(re.findall(r"\bWEFT_API\b[^;{}()]*?\b(weft_\w+)\s*\(", text))


def blank(src):
    """src with comments, strings and character literals replaced by
    spaces (newlines kept, so line numbers stay)."""
    out = []
    i = 0
    n = len(src)
    while i < n:
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
        elif src[i] in "\"'":
            q = src[i]
            j = i + 1
            while j < n and src[j] != q and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
        else:
            out.append(src[i])
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", src[i:j]))
        i = j
    return "".join(out)


TOKEN = re.compile(r"[{}]|\b[A-Za-z_]\w*\b")


def uses(path, names):
    """(line, name) of every public name used inside a function body or a
    macro definition of the file at path."""
    text = blank(open(path, encoding="utf-8").read())
    found = []
    depth = 0
    in_macro = False
    for lineno, line in enumerate(text.split("\n"), 1):
        if not in_macro and re.match(r"\s*#\s*define\b", line):
            in_macro = True
        for m in TOKEN.finditer(line):
            t = m.group(0)
            if t == "{":
                depth += 1
            elif t == "}":
                depth -= 1
            elif t in names and (depth > 0 or in_macro):
                found.append((lineno, t))
        if in_macro and not line.rstrip().endswith("\\"):
            in_macro = False
    return found


def main():
    header, src = sys.argv[1], sys.argv[2]
    names = public_names(header)
    # guard against a vacuous pass (a header the pattern no longer reads)
    if len(names) < 100:
        print(f"check_public_calls: only {len(names)} WEFT_API functions found in {header}")
        return 1
    files = 0
    bad = []
    for root, dirs, fnames in os.walk(src):
        rel = os.path.relpath(root, src)
        if rel.split(os.sep)[0] in CLIENTS:
            dirs[:] = []
            continue
        dirs.sort()
        for f in sorted(fnames):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(root, f)
            files += 1
            for lineno, name in uses(path, names):
                bad.append(f"  src/{os.path.relpath(path, src)}:{lineno}: {name}")
    if files < 50:
        print(f"check_public_calls: only {files} source files found under {src}")
        return 1
    if bad:
        print("check_public_calls: library code uses public weft_* entry points "
              "(call the internal wf_* function instead):")
        print("\n".join(bad))
        print(f"check_public_calls: {len(bad)} use(s)")
        return 1
    print(f"check_public_calls: ok, {files} files of src/ (without "
          f"{', '.join('src/' + c + '/' for c in CLIENTS)}) use none of the "
          f"{len(names)} public functions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
