# bindings/python/setup.py - builds libweft with CMake from the checkout this package sits in and bundles it inside the package (pyproject.toml holds the metadata).
# SPDX-License-Identifier: MIT
"""`pip install ./bindings/python` runs this through setuptools.build_meta.

build_py (every wheel build runs it) configures and builds the shared
library of the weft checkout two directories up (or $WEFT_SOURCE_DIR) with
CMake, Release, only the `weft_shared` target, in setuptools' temporary
build directory, and copies it into the package as weft/libweft.so.0.<minor>,
where weft/_loader.py looks first. Nothing is downloaded.

Environment:
  WEFT_BUILD_LIBRARY=0   install the Python files only (the package then
                         finds a library through WEFT_LIBRARY, pkg-config or
                         the loader's path, as described in docs/bindings.md)
  WEFT_SOURCE_DIR=dir    the weft checkout to build (default: ../.. of this file)
  WEFT_CMAKE_ARGS="..."  extra arguments for the CMake configure step
  CMAKE, CC              which cmake and C compiler to use
"""

import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))


def _fail(msg):
    sys.stderr.write("\nweft: %s\n\n" % msg)
    raise SystemExit(1)


def _wheel_support():
    """setuptools builds wheels itself from 70.1; before that it needs the
    `wheel` package, without which pip fails with "invalid command
    'bdist_wheel'". Say so instead."""
    if "bdist_wheel" not in sys.argv:
        return
    try:
        import wheel  # noqa: F401
        return
    except ImportError:
        pass
    import setuptools
    ver = tuple(int(x) for x in re.findall(r"\d+", setuptools.__version__)[:2])
    if ver < (70, 1):
        _fail("building a wheel with setuptools %s needs the `wheel` package, which "
              "this interpreter lacks (Debian: apt-get install python3-wheel; in a venv "
              "made with --system-site-packages it is then visible), or setuptools >= "
              "70.1." % setuptools.__version__)


def _soname():
    """libweft.so.0.<minor> for the version in include/weft.h's pyproject twin."""
    with open(os.path.join(HERE, "pyproject.toml")) as f:
        m = re.search(r'^version = "(\d+)\.(\d+)\.(\d+)"', f.read(), re.M)
    major, minor = int(m.group(1)), int(m.group(2))
    return "libweft.so.0.%d" % minor if major == 0 else "libweft.so.%d" % major


def _source_dir():
    src = os.environ.get("WEFT_SOURCE_DIR") or os.path.normpath(os.path.join(HERE, "..", ".."))
    if not (os.path.isfile(os.path.join(src, "CMakeLists.txt"))
            and os.path.isfile(os.path.join(src, "include", "weft.h"))):
        _fail("no weft checkout at %s to build libweft from: install from "
              "bindings/python inside a weft clone, set WEFT_SOURCE_DIR to the clone, "
              "or set WEFT_BUILD_LIBRARY=0 to install the Python files alone (then "
              "install libweft with cmake --install)." % src)
    return src


def _tools():
    cmake = os.environ.get("CMAKE") or shutil.which("cmake")
    if not cmake:
        _fail("building libweft needs CMake (3.25 or newer) and a C11 compiler; cmake is "
              "not on PATH (Debian: apt-get install cmake gcc). Or set "
              "WEFT_BUILD_LIBRARY=0 to install without the library.")
    cc = os.environ.get("CC")
    if cc:
        cc_path = shutil.which(shlex.split(cc)[0])
    else:
        cc_path = next((shutil.which(c) for c in ("cc", "gcc", "clang") if shutil.which(c)),
                       None)
    if not cc_path:
        _fail("building libweft needs a C11 compiler (cc, gcc or clang; or set CC), and "
              "none is on PATH (Debian: apt-get install gcc). Or set "
              "WEFT_BUILD_LIBRARY=0 to install without the library.")
    return cmake, cc_path


def _run(cmd, what):
    sys.stdout.write("weft: %s\n  %s\n" % (what, " ".join(shlex.quote(c) for c in cmd)))
    sys.stdout.flush()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    if r.returncode != 0:
        _fail("%s failed (exit %d):\n%s" % (what, r.returncode, r.stdout[-6000:]))


def build_library(build_temp):
    """Builds libweft.so and returns the path of the real file."""
    src = _source_dir()
    cmake, cc = _tools()
    bdir = os.path.join(os.path.abspath(build_temp), "libweft")
    cfg = [cmake, "-S", src, "-B", bdir, "-DCMAKE_BUILD_TYPE=Release",
           "-DCMAKE_C_COMPILER=" + cc,
           "-DWEFT_BUILD_TESTS=OFF", "-DWEFT_BUILD_BENCH=OFF", "-DWEFT_BUILD_EXAMPLES=OFF",
           "-DWEFT_WERROR=OFF", "-DWEFT_REMOTE=OFF", "-DWEFT_FUZZ=OFF"]
    cfg += shlex.split(os.environ.get("WEFT_CMAKE_ARGS", ""))
    _run(cfg, "configuring libweft")
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(min(2, os.cpu_count() or 1))
    _run([cmake, "--build", bdir, "--target", "weft_shared", "-j", jobs], "building libweft")
    lib = os.path.join(bdir, _soname())
    if not os.path.exists(lib):
        _fail("the build left no %s in %s" % (_soname(), bdir))
    return os.path.realpath(lib)


class BuildPyWithLibrary(build_py):
    """build_py that also puts libweft inside the package."""

    def run(self):
        super().run()
        if os.environ.get("WEFT_BUILD_LIBRARY", "1") == "0":
            return
        if getattr(self, "editable_mode", False):
            return   # an editable install uses the clone's build tree (see _loader)
        lib = build_library(self.get_finalized_command("build").build_temp)
        dest = os.path.join(self.build_lib, "weft", _soname())
        self.mkpath(os.path.dirname(dest))
        shutil.copyfile(lib, dest)
        os.chmod(dest, 0o755)


class BinaryDistribution(Distribution):
    """The wheel holds a native library: platform-specific, not pure."""

    def has_ext_modules(self):
        return os.environ.get("WEFT_BUILD_LIBRARY", "1") != "0"


_wheel_support()
setup(cmdclass={"build_py": BuildPyWithLibrary}, distclass=BinaryDistribution)
