# bindings/python/tests/test_install.py - the one-command install: pip builds libweft from the checkout with CMake, bundles it in the package, offline, in a fresh virtual environment; the overrides and the error messages.
# SPDX-License-Identifier: MIT
#
# Needs what Debian's python3-venv, python3-setuptools and python3-wheel
# provide, CMake and a C compiler (no network: pip runs with --no-index
# --no-build-isolation). It runs when WEFT_REQUIRE_INSTALL=1 (the ctest test
# test_python_install, with an interpreter that has them; lacking them is
# then a failure) or WEFT_TEST_INSTALL=1 (skipped when the interpreter lacks
# them), and is skipped otherwise: the whole suite's discovery leaves its
# build of libweft (about 30 s) to ctest.
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from weft import _loader

from .needs import lacking
from .test_loader import LIB, PKG_DIR, REPO, clean_env, installed_prefix, have_pkg_config


def can_build_offline():
    """None when this interpreter can create a venv and build the package
    without the network, else what it lacks."""
    out = lacking("install")
    return ("%s lacks %s" % (sys.executable, ", ".join(out))) if out else None


def no_preload_env(**extra):
    """clean_env() without the sanitizer preload: pip, venv and the
    compiler need none."""
    env = clean_env(**extra)
    env.pop("LD_PRELOAD", None)
    return env


def copy_checkout(dest):
    """The parts of the weft checkout the install builds from (a copy:
    setuptools writes build/ and *.egg-info next to the sources, and the
    test must not build in the developer's tree)."""
    for d in ("include", "src", "cmake"):
        shutil.copytree(os.path.join(REPO, d), os.path.join(dest, d))
    for f in ("CMakeLists.txt", "LICENSE"):
        if os.path.exists(os.path.join(REPO, f)):
            shutil.copy(os.path.join(REPO, f), dest)
    shutil.copytree(PKG_DIR, os.path.join(dest, "bindings", "python"),
                    ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info",
                                                  "tests"))
    return os.path.join(dest, "bindings", "python")


def pip_install(python, src, cwd, **env):
    return subprocess.run([python, "-m", "pip", "install", "--no-index",
                           "--no-build-isolation", "--no-cache-dir", "--no-input", src],
                          env=no_preload_env(**env), cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)


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
        cls.src = copy_checkout(os.path.join(cls.tmp, "checkout"))
        cls.venv = os.path.join(cls.tmp, "venv")
        cls.python = os.path.join(cls.venv, "bin", "python")
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", cls.venv],
                       env=no_preload_env(), check=True, stdout=subprocess.DEVNULL)
        r = pip_install(cls.python, cls.src, cls.tmp)
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

    def test_the_bundled_library_is_found_first(self):
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
                "print(weft._lib._weft_origin)\n"
                "print(weft._lib._name)\n")
        out = self.run_in_venv(code)
        self.assertEqual(out[0], "2.5")
        self.assertTrue(out[1].startswith(os.path.join(self.venv, "lib")), out[1])
        self.assertEqual(out[2:4], ["True", "bundled"])
        self.assertEqual(out[4], os.path.join(out[1], _loader._soname()))

    def test_weft_library_still_overrides(self):
        out = self.run_in_venv("import weft; print(weft._lib._weft_origin); "
                               "print(weft._lib._name)", WEFT_LIBRARY=LIB)
        self.assertEqual(out[:2], ["WEFT_LIBRARY", LIB])

    @unittest.skipUnless(have_pkg_config(), "pkg-config is not installed")
    def test_an_installed_library_when_preferred(self):
        prefix = tempfile.mkdtemp(prefix="weft_prefix_", dir=self.tmp)
        libdir = installed_prefix(prefix)
        pc = os.path.join(libdir, "pkgconfig")
        out = self.run_in_venv("import weft; print(weft._lib._weft_origin); "
                               "print(weft._lib._name)", PKG_CONFIG_PATH=pc,
                               WEFT_PREFER_INSTALLED="1")
        self.assertEqual(out[:2], ["pkg-config", os.path.join(libdir, _loader._soname())])
        out = self.run_in_venv("import weft; print(weft._lib._weft_origin)",
                               PKG_CONFIG_PATH=pc)
        self.assertEqual(out[0], "bundled")   # not asked: the bundled one wins

    def test_without_the_library_the_package_says_where_it_looked(self):
        # WEFT_BUILD_LIBRARY=0: the Python files alone, as before
        venv = os.path.join(self.tmp, "venv-nolib")
        python = os.path.join(venv, "bin", "python")
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv],
                       env=no_preload_env(), check=True, stdout=subprocess.DEVNULL)
        r = pip_install(python, self.src, self.tmp, WEFT_BUILD_LIBRARY="0")
        self.assertEqual(r.returncode, 0, r.stdout)
        empty = tempfile.mkdtemp(prefix="weft_nopc_", dir=self.tmp)
        env = clean_env(PKG_CONFIG_PATH=empty, PKG_CONFIG_LIBDIR=empty)
        env.pop("LD_LIBRARY_PATH", None)
        r = subprocess.run([python, "-c", "import weft"], env=env, cwd=self.tmp,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        if r.returncode == 0:
            self.skipTest("a weft installed on the standard library path was found")
        self.assertIn("ImportError: weft: no usable libweft", r.stderr)
        self.assertIn("bundled: the package carries no library", r.stderr)
        self.assertIn("build tree: the package is not inside a weft clone", r.stderr)

    def test_missing_cmake_or_compiler_is_named(self):
        bare = tempfile.mkdtemp(prefix="weft_bare_path_", dir=self.tmp)  # PATH without tools
        cases = [("cmake", dict(PATH=bare), "needs CMake"),
                 ("compiler", dict(CC="/nonexistent/cc"), "needs a C11 compiler")]
        for name, env, want in cases:
            with self.subTest(name):
                r = pip_install(self.python, self.src, self.tmp, **env)
                self.assertNotEqual(r.returncode, 0)
                self.assertIn(want, r.stdout)
                self.assertIn("WEFT_BUILD_LIBRARY=0", r.stdout)


if __name__ == "__main__":
    unittest.main()
