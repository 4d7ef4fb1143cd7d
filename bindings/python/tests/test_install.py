# bindings/python/tests/test_install.py - the package installs offline into a fresh virtual environment and works from there.
# SPDX-License-Identifier: MIT
#
# Needs what Debian's python3-venv, python3-setuptools and python3-wheel
# provide (no network: pip runs with --no-index --no-build-isolation). It
# runs when WEFT_REQUIRE_INSTALL=1 (the ctest test test_python_install, with
# an interpreter that has them; lacking them is then a failure) or
# WEFT_TEST_INSTALL=1 (skipped when the interpreter lacks them), and is
# skipped otherwise: the whole suite's discovery leaves its 10 s to ctest.
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from weft import _loader

from .needs import lacking
from .test_loader import LIB, PKG_DIR, clean_env, installed_prefix, have_pkg_config


def can_build_offline():
    """None when this interpreter can create a venv and build the package
    without the network, else what it lacks."""
    out = lacking("install")
    return ("%s lacks %s" % (sys.executable, ", ".join(out))) if out else None


def no_preload_env(**extra):
    """clean_env() without the sanitizer preload: pip and venv need none."""
    env = clean_env(**extra)
    env.pop("LD_PRELOAD", None)
    return env


class TestInstall(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.environ.get("WEFT_REQUIRE_INSTALL") != "1" \
                and os.environ.get("WEFT_TEST_INSTALL") != "1":
            # about 10 s: the unittest discovery of the whole suite leaves it
            # to its own ctest test, test_python_install
            raise unittest.SkipTest("run as test_python_install (or set WEFT_TEST_INSTALL=1)")
        why = can_build_offline()
        if why:
            if os.environ.get("WEFT_REQUIRE_INSTALL") == "1":
                raise AssertionError("WEFT_REQUIRE_INSTALL=1 but " + why)
            raise unittest.SkipTest(why)
        cls.tmp = tempfile.mkdtemp(prefix="weft_install_")
        # Build from a copy: setuptools writes build/ and *.egg-info next to
        # the sources it builds.
        src = os.path.join(cls.tmp, "src")
        shutil.copytree(PKG_DIR, src, ignore=shutil.ignore_patterns(
            "__pycache__", "build", "*.egg-info", "tests"))
        cls.venv = os.path.join(cls.tmp, "venv")
        cls.python = os.path.join(cls.venv, "bin", "python")
        env = no_preload_env()
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", cls.venv],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        r = subprocess.run([cls.python, "-m", "pip", "install", "--no-index",
                            "--no-build-isolation", "--no-cache-dir", "--no-input", src],
                           env=env, cwd=cls.tmp, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
        if r.returncode != 0:
            shutil.rmtree(cls.tmp)
            raise AssertionError("pip install failed:\n" + r.stdout)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def run_in_venv(self, code, **env):
        r = subprocess.run([self.python, "-c", code], env=clean_env(**env), cwd=self.tmp,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.split("\n")

    def test_imports_from_the_venv_and_runs_a_world(self):
        code = ("import ctypes, os, weft\n"
                "class P(ctypes.Structure):\n"
                "    _fields_ = [('x', ctypes.c_float)]\n"
                "with weft.World() as w:\n"
                "    w.register(P)\n"
                "    e = w.spawn(P(2.5))\n"
                "    print(w.get(e, P).x)\n"
                "d = os.path.dirname(weft.__file__)\n"
                "print(d)\n"
                "print(os.path.isfile(os.path.join(d, 'py.typed')))\n"
                "print(weft._lib._weft_origin)\n")
        out = self.run_in_venv(code, WEFT_LIBRARY=LIB)
        self.assertEqual(out[0], "2.5")
        self.assertTrue(out[1].startswith(os.path.join(self.venv, "lib")), out[1])
        self.assertEqual(out[2:4], ["True", "WEFT_LIBRARY"])

    @unittest.skipUnless(have_pkg_config(), "pkg-config is not installed")
    def test_finds_an_installed_library_through_pkg_config(self):
        prefix = tempfile.mkdtemp(prefix="weft_prefix_", dir=self.tmp)
        libdir = installed_prefix(prefix)
        out = self.run_in_venv("import weft; print(weft._lib._weft_origin); "
                               "print(weft._lib._name)",
                               PKG_CONFIG_PATH=os.path.join(libdir, "pkgconfig"))
        self.assertEqual(out[:2], ["pkg-config", os.path.join(libdir, _loader._soname())])

    def test_installed_package_without_a_library_says_where_it_looked(self):
        empty = tempfile.mkdtemp(prefix="weft_nopc_", dir=self.tmp)
        env = clean_env(PKG_CONFIG_PATH=empty, PKG_CONFIG_LIBDIR=empty)
        env.pop("LD_LIBRARY_PATH", None)
        r = subprocess.run([self.python, "-c", "import weft"], env=env, cwd=self.tmp,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        if r.returncode == 0:
            self.skipTest("a weft installed on the standard library path was found")
        self.assertIn("ImportError: weft: no usable libweft", r.stderr)
        self.assertIn("build tree: the package is not inside a weft clone", r.stderr)


if __name__ == "__main__":
    unittest.main()
