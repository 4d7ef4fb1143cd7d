# bindings/python/tests/test_loader.py - where the package finds libweft, in which order, and the error when nothing fits.
# SPDX-License-Identifier: MIT
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

import weft
from weft import _loader

PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(weft.__file__)))   # bindings/python
REPO = os.path.normpath(os.path.join(PKG_DIR, "..", ".."))
LIB = os.path.realpath(weft._lib._name)   # the library the suite runs against


def write_pc(dirname, libdir):
    """A weft.pc as `cmake --install` writes it, with `libdir`."""
    with open(os.path.join(dirname, "weft.pc"), "w") as f:
        f.write("prefix=/nonexistent\nlibdir=%s\nincludedir=${prefix}/include\n\n"
                "Name: weft\nDescription: test\nVersion: 0.3.0\n"
                "Libs: -L${libdir} -lweft\nCflags: -I${includedir}\n" % libdir)


def installed_prefix(tmp):
    """A fake install prefix: tmp/lib/<soname> -> LIB and tmp/lib/pkgconfig/weft.pc."""
    libdir = os.path.join(tmp, "lib")
    os.makedirs(os.path.join(libdir, "pkgconfig"))
    os.symlink(LIB, os.path.join(libdir, _loader._soname()))
    write_pc(os.path.join(libdir, "pkgconfig"), libdir)
    return libdir


def clean_env(**extra):
    """The environment minus everything that points at a library."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("WEFT_LIBRARY", "PKG_CONFIG_PATH", "PYTHONPATH")}
    env.update(extra)
    return env


def system_has_weft():
    """True when the dynamic loader's standard path already holds the soname
    (a weft installed system-wide would legitimately win over a build tree)."""
    code = "import ctypes, sys\ntry:\n ctypes.CDLL(sys.argv[1])\nexcept OSError:\n sys.exit(1)\n"
    env = clean_env()
    env.pop("LD_LIBRARY_PATH", None)
    return subprocess.run([sys.executable, "-c", code, _loader._soname()], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def have_pkg_config():
    return shutil.which("pkg-config") is not None


class TestCandidateOrder(unittest.TestCase):
    """_library_candidates, with the environment, pkg-config and the file
    system replaced, lists the steps in the documented order."""

    BUNDLED = "/site/weft/" + _loader._soname()

    def cands(self, path=None, env=None, pkg=(None, "no weft.pc"), root=None, files=(),
              keep_bundled=False):
        c = _loader._library_candidates(path, environ=env or {}, pkg_config=lambda: pkg,
                                        root=root, exists=lambda p: p in files,
                                        bundled=self.BUNDLED)
        if not keep_bundled and c and c[0].origin == "bundled" and c[0].path is None:
            c = c[1:]   # the package carries no library: the order below as before
        return c

    def test_bundled_library_comes_first_unless_installed_is_preferred(self):
        soname = _loader._soname()
        files = {self.BUNDLED, "/opt/weft/lib/" + soname}
        c = self.cands(pkg=("/opt/weft/lib", None), root="", files=files)
        self.assertEqual([(x.origin, x.path) for x in c][:3], [
            ("bundled", self.BUNDLED), ("pkg-config", "/opt/weft/lib/" + soname),
            ("standard library path", soname)])
        c = self.cands(env={"WEFT_PREFER_INSTALLED": "1"}, pkg=("/opt/weft/lib", None),
                       root="", files=files)
        self.assertEqual([(x.origin, x.path) for x in c][:3], [
            ("pkg-config", "/opt/weft/lib/" + soname), ("standard library path", soname),
            ("bundled", self.BUNDLED)])
        c = self.cands(env={"WEFT_LIBRARY": "/y/libweft.so"}, files=files)
        self.assertEqual([x.origin for x in c], ["WEFT_LIBRARY"])
        c = self.cands(root="", keep_bundled=True)
        self.assertEqual((c[0].origin, c[0].path), ("bundled", None))
        self.assertIn("carries no library", c[0].why)

    def test_explicit_path_is_the_only_candidate(self):
        c = self.cands("/x/libweft.so", env={"WEFT_LIBRARY": "/y/libweft.so"},
                       pkg=("/usr/lib", None), files={"/usr/lib/" + _loader._soname()})
        self.assertEqual([(x.origin, x.path, x.final) for x in c],
                         [("explicit path", "/x/libweft.so", True)])

    def test_weft_library_comes_before_any_search(self):
        soname = _loader._soname()
        c = self.cands(env={"WEFT_LIBRARY": "/y/libweft.so"}, pkg=("/usr/lib", None),
                       root="/src", files={"/usr/lib/" + soname, "/src/build/" + soname})
        self.assertEqual([(x.origin, x.path, x.final) for x in c],
                         [("WEFT_LIBRARY", "/y/libweft.so", True)])

    def test_installed_then_standard_path_then_build_tree(self):
        soname = _loader._soname()
        files = {"/opt/weft/lib/" + soname, "/opt/weft/lib/libweft.so",
                 "/src/build/release/" + soname, "/src/build/" + soname}
        c = self.cands(pkg=("/opt/weft/lib", None), root="/src", files=files)
        self.assertEqual([(x.origin, x.path) for x in c], [
            ("pkg-config", "/opt/weft/lib/" + soname),
            ("standard library path", soname),
            ("build tree", "/src/build/" + soname),
            ("build tree", "/src/build/release/" + soname)])
        self.assertFalse(any(x.final for x in c))

    def test_steps_with_nothing_to_try_say_why(self):
        c = self.cands(pkg=(None, "pkg-config knows no weft"), root="")   # "": no clone
        self.assertEqual([(x.origin, x.path) for x in c], [
            ("pkg-config", None), ("standard library path", _loader._soname()),
            ("build tree", None)])
        self.assertEqual(c[0].why, "pkg-config knows no weft")
        self.assertIn("not inside a weft clone", c[2].why)
        c = self.cands(pkg=("/opt/weft/lib", None), root="/src", files=())
        self.assertIn("holds no " + _loader._soname(), c[0].why)
        self.assertIn("none built in /src", c[2].why)

    def test_soname_follows_the_abi_version(self):
        self.assertEqual(_loader._soname(), "libweft.so.0.%d" % (weft.ABI_VERSION // 100 % 100))
        self.assertTrue(os.path.basename(weft._lib._name).startswith("libweft.so"))


class TestLoading(unittest.TestCase):
    """load_library() and `import weft` against real files."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="weft_loader_")
        self.addCleanup(shutil.rmtree, self.tmp)

    def test_explicit_path_wins_over_weft_library(self):
        with mock.patch.dict(os.environ, {"WEFT_LIBRARY": "/nonexistent/libweft.so"}):
            lib = weft.load_library(LIB)
        self.assertEqual(lib._weft_origin, "explicit path")
        self.assertEqual(lib.weft_abi_version(), weft.ABI_VERSION)

    @unittest.skipUnless(have_pkg_config(), "pkg-config is not installed")
    def test_weft_library_does_not_fall_through(self):
        installed_prefix(self.tmp)
        env = {"WEFT_LIBRARY": "/nonexistent/libweft.so",
               "PKG_CONFIG_PATH": os.path.join(self.tmp, "lib", "pkgconfig")}
        with mock.patch.dict(os.environ, env):
            with self.assertRaises(ImportError) as cm:
                weft.load_library()
        msg = str(cm.exception)
        self.assertIn("WEFT_LIBRARY: /nonexistent/libweft.so", msg)
        self.assertNotIn("pkg-config", msg.split("Build and install")[0])

    @unittest.skipUnless(have_pkg_config(), "pkg-config is not installed")
    def test_pkg_config_finds_the_installed_library(self):
        libdir = installed_prefix(self.tmp)
        with mock.patch.dict(os.environ, {"PKG_CONFIG_PATH": os.path.join(libdir, "pkgconfig")}):
            os.environ.pop("WEFT_LIBRARY", None)
            lib = weft.load_library()
        self.assertEqual(lib._weft_origin, "pkg-config")
        self.assertEqual(lib._name, os.path.join(libdir, _loader._soname()))

    @unittest.skipUnless(have_pkg_config(), "pkg-config is not installed")
    def test_searched_library_of_another_abi_version_is_refused_with_the_versions(self):
        libdir = installed_prefix(self.tmp)
        old = weft.ABI_VERSION
        try:
            weft.ABI_VERSION = old + 1
            with mock.patch.dict(os.environ,
                                 {"PKG_CONFIG_PATH": os.path.join(libdir, "pkgconfig")}):
                os.environ.pop("WEFT_LIBRARY", None)
                with self.assertRaises(ImportError) as cm:
                    weft.load_library()
        finally:
            weft.ABI_VERSION = old
        self.assertIn("pkg-config: %s" % os.path.join(libdir, _loader._soname()),
                      str(cm.exception))
        self.assertIn("weft_abi_version() is %d, this binding was written for %d"
                      % (old, old + 1), str(cm.exception))

    def fake_clone(self, with_build):
        """tmp/bindings/python/weft (a copy of the package), tmp/include/weft.h
        and, with_build, tmp/build/<soname> -> LIB."""
        shutil.copytree(os.path.join(PKG_DIR, "weft"),
                        os.path.join(self.tmp, "bindings", "python", "weft"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        os.makedirs(os.path.join(self.tmp, "include"))
        open(os.path.join(self.tmp, "include", "weft.h"), "w").close()
        if with_build:
            os.makedirs(os.path.join(self.tmp, "build"))
            os.symlink(LIB, os.path.join(self.tmp, "build", _loader._soname()))

    def run_import(self, pythonpath):
        """`import weft` in a fresh interpreter with no WEFT_LIBRARY and a
        pkg-config that knows no weft; (returncode, stdout, stderr)."""
        empty = os.path.join(self.tmp, "no_pc")
        os.makedirs(empty, exist_ok=True)
        env = clean_env(PYTHONPATH=pythonpath, PKG_CONFIG_PATH=empty, PKG_CONFIG_LIBDIR=empty)
        code = "import weft; print(weft._lib._weft_origin); print(weft._lib._name)"
        r = subprocess.run([sys.executable, "-c", code], env=env, cwd=self.tmp,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        return r.returncode, r.stdout, r.stderr

    def test_build_tree_next_to_the_sources(self):
        if system_has_weft():
            self.skipTest("a weft installed on the standard library path comes first")
        self.fake_clone(with_build=True)
        rc, out, err = self.run_import(os.path.join(self.tmp, "bindings", "python"))
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.split("\n")[:2],
                         ["build tree", os.path.join(self.tmp, "build", _loader._soname())])

    def test_nothing_found_is_a_clear_import_error(self):
        if system_has_weft():
            self.skipTest("a weft installed on the standard library path would be found")
        self.fake_clone(with_build=False)
        rc, out, err = self.run_import(os.path.join(self.tmp, "bindings", "python"))
        self.assertNotEqual(rc, 0)
        self.assertIn("ImportError: weft: no usable libweft (%s" % _loader._soname(), err)
        steps = re.findall(r"^  (pkg-config|standard library path|build tree): ", err, re.M)
        self.assertEqual(steps, ["pkg-config", "standard library path", "build tree"])
        self.assertIn("none built in %s" % self.tmp, err)
        self.assertIn("set WEFT_LIBRARY", err)


class TestPackage(unittest.TestCase):
    def test_pyproject_version_is_weft_h_version(self):
        with open(os.path.join(PKG_DIR, "pyproject.toml")) as f:
            version = re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1)
        with open(os.path.join(REPO, "include", "weft.h")) as f:
            h = f.read()
        parts = [re.search(r"#define WEFT_VERSION_%s (\d+)" % k, h).group(1)
                 for k in ("MAJOR", "MINOR", "PATCH")]
        self.assertEqual(version, ".".join(parts))
        self.assertEqual(weft.ABI_VERSION, int(parts[0]) * 10000 + int(parts[1]) * 100
                         + int(parts[2]))

    def test_py_typed_marker_ships_with_the_package(self):
        self.assertTrue(os.path.isfile(os.path.join(PKG_DIR, "weft", "py.typed")))
        with open(os.path.join(PKG_DIR, "pyproject.toml")) as f:
            self.assertIn('weft = ["py.typed"]', f.read())


if __name__ == "__main__":
    unittest.main()
