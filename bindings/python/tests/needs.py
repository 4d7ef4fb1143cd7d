# bindings/python/tests/needs.py - which optional parts this interpreter lacks (numpy; an offline venv install; mypy). Standard library only.
# SPDX-License-Identifier: MIT
"""`python3 needs.py numpy install types` exits 0 when this interpreter has
everything the named tests need, else prints what it lacks and exits 1.
tests/CMakeLists.txt uses it to pick the interpreter for those tests:
Debian installs python3-numpy, python3-venv, python3-setuptools,
python3-wheel and python3-mypy for the system interpreter, which need not
be the first python3 on PATH."""

import importlib.util
import sys


def lacking(need):
    """What this interpreter lacks for `need` ("numpy", "install" or "types"),
    a list."""
    if need == "numpy":
        return [] if importlib.util.find_spec("numpy") else ["numpy"]
    if need == "types":
        return [] if importlib.util.find_spec("mypy") else ["mypy"]
    if need == "install":
        out = [m for m in ("venv", "ensurepip", "setuptools")
               if importlib.util.find_spec(m) is None]
        if not out and importlib.util.find_spec("wheel") is None:
            # setuptools builds wheels without the wheel package from 70.1 on
            from importlib.metadata import version
            if tuple(int(x) for x in version("setuptools").split(".")[:2]) < (70, 1):
                out.append("wheel")
        return out
    raise ValueError("unknown need %r" % need)


def main(argv):
    out = [m for need in argv for m in lacking(need)]
    if out:
        print("%s lacks %s" % (sys.executable, ", ".join(out)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
