#!/usr/bin/env python3
# tests/hostile/check_callback_kinds.py - every callback kind weft.h declares
# (a function-pointer typedef, or a function-pointer member of a public
# struct) is named in test_callback_guard.c's table, or exempted below with
# the reason. Fails naming the kinds that are neither.
# SPDX-License-Identifier: MIT
import re
import sys

# Kinds that are not user callbacks weft calls, or that this table cannot
# reach, each with the reason.
EXEMPT = {
    # weft's own job, handed to the host's submit: the host calls it
    "weft_job_fn": "weft's function, called by the host",
    # thread_create's `fn` parameter: weft's thread body, run by the host
    "weft_os_api.fn": "weft's function, run by the host's thread",
    # a module's entry point: reaching it needs a shared library built by
    # the test (tests/module); module.c calls it through WF_CALLBACK
    "weft_module_entry_fn": "needs a module build (tests/module)",
}


def kinds(header):
    text = open(header, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    found = set(re.findall(r"typedef\s+[^;()]*\(\s*\*\s*(weft_\w+)\s*\)\s*\(", text))
    for m in re.finditer(r"typedef\s+struct\s+(weft_\w+)\s*\{(.*?)\}\s*\1\s*;", text, re.S):
        for member in re.findall(r"\(\s*\*\s*(\w+)\s*\)\s*\(", m.group(2)):
            found.add(f"{m.group(1)}.{member}")
    return found


def main():
    header, test = sys.argv[1], sys.argv[2]
    declared = kinds(header)
    if len(declared) < 10:
        print(f"check_callback_kinds: only {len(declared)} kinds found in {header}")
        return 1
    table = set(re.findall(r'\{"(weft_[\w.]+)",', open(test, encoding="utf-8").read()))
    missing = sorted(k for k in declared if k not in table and k not in EXEMPT)
    stale = sorted(k for k in EXEMPT if k not in declared)
    for k in missing:
        print(f"check_callback_kinds: {k} is declared in weft.h but not in the callback table")
    for k in stale:
        print(f"check_callback_kinds: exemption {k} names no kind weft.h declares")
    print(f"check_callback_kinds: {len(declared)} kinds, {len(table)} table rows, "
          f"{len(EXEMPT)} exempt")
    return 1 if missing or stale else 0


if __name__ == "__main__":
    sys.exit(main())
