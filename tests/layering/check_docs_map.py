#!/usr/bin/env python3
# tests/layering/check_docs_map.py - docs/architecture.md's module map names
# every source file, and only files that exist.
# SPDX-License-Identifier: MIT
"""The first fenced block under "## Modules and layering" in
docs/architecture.md is the module map: a folder line ("src/core/  ...")
opens a folder, and the entries below it name its files ("alloc.c/.h" is
alloc.c and alloc.h; several names may share a line). Fails, listing them,
when a .c or .h file under src/ is missing from the map, or when the map
names a file that does not exist.

Usage: check_docs_map.py <repository root>"""

import os
import re
import sys

NAME = re.compile(r"^[A-Za-z0-9_]+\.(?:c|h)(?:/\.(?:c|h))*$")


def map_block(text):
    at = text.find("## Modules and layering")
    if at < 0:
        raise SystemExit("check_docs_map: no '## Modules and layering' section")
    start = text.find("```", at)
    end = text.find("```", start + 3)
    if start < 0 or end < 0:
        raise SystemExit("check_docs_map: no fenced module map after the heading")
    return text[start + 3:end].splitlines()


def listed(lines):
    """{path relative to the root} the map names."""
    out = set()
    folder = None
    for line in lines:
        if not line.strip():
            continue
        words = line.split()
        if not line.startswith(" "):
            # a folder line ("src/core/   ...") or a top-level file
            # ("include/weft.h  ..."); a folder may repeat (a second part)
            if words[0].endswith("/"):
                folder = words[0]
                continue
            folder = None
            if words[0].startswith("src/") and NAME.match(os.path.basename(words[0])):
                out.add(words[0])
            continue
        if folder is None:
            continue
        # entries: leading names until the first word that is not one
        for w in words:
            if not NAME.match(w):
                break
            stem, _, rest = w.partition(".")
            exts = [rest.split("/")[0]] + [p.lstrip(".") for p in rest.split("/")[1:]]
            for ext in exts:
                out.add(folder + stem + "." + ext)
    return out


def main(argv):
    root = argv[1] if len(argv) > 1 else "."
    with open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8") as f:
        names = listed(map_block(f.read()))
    on_disk = set()
    for dirpath, _, files in os.walk(os.path.join(root, "src")):
        for fn in files:
            if fn.endswith((".c", ".h")):
                on_disk.add(os.path.relpath(os.path.join(dirpath, fn), root))
    if len(names) < 20 or not on_disk:
        print("check_docs_map: the map names %d files, src/ holds %d (wrong root?)"
              % (len(names), len(on_disk)), file=sys.stderr)
        return 1
    missing = sorted(on_disk - names)
    stale = sorted(n for n in names if n.startswith("src/") and n not in on_disk)
    if missing or stale:
        if missing:
            print("docs/architecture.md's module map lacks:", file=sys.stderr)
            for m in missing:
                print("  " + m, file=sys.stderr)
        if stale:
            print("docs/architecture.md's module map names files that do not exist:",
                  file=sys.stderr)
            for s in stale:
                print("  " + s, file=sys.stderr)
        return 1
    print("ok: docs/architecture.md's module map names all %d source files" % len(on_disk))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
