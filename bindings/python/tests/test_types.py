# bindings/python/tests/test_types.py - the inline type hints: mypy finds the package clean and checks user code against it; the spelled-out status names match the runtime ones.
# SPDX-License-Identifier: MIT
#
# The mypy tests need mypy (Debian: python3-mypy). They run when
# WEFT_REQUIRE_TYPES=1 (the ctest test test_python_types, with an
# interpreter that has mypy; lacking it is then a failure) or
# WEFT_TEST_TYPES=1 (skipped without mypy), and are skipped otherwise: the
# whole suite's discovery leaves their seconds to their own ctest test.
import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

import weft

from .needs import lacking

PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(weft.__file__)))   # bindings/python

GOOD = '''
import ctypes
from typing import List, Optional

import weft
from weft import read, write


class Position(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]


def main() -> float:
    with weft.World() as w:
        w.register(Position)
        e: int = w.spawn(Position(1, 2))
        p: Optional[Position] = w.get(e, Position)
        q = w.query(write(Position), read(Position))
        n: int = q.count()
        rows: List[int] = [chunk.count for chunk in q]
        s = w.schedule("update")

        @s.system(query=[write(Position)])
        def move(ctx: weft.SystemContext) -> None:
            for chunk in ctx.iter(0):
                chunk.array(0)["x"] += ctx.delta

        s.run(1 / 60)
        node: weft.Node = s.add_system(move, name="again", query=[write(Position)])
        stale: int = weft.ERR_STALE_ENTITY
        screen: weft.State = w.register_state("Screen", ["Menu", "Game"])
        screen.set_next("Game")
        w.state_transition()
        now: Optional[str] = screen.get()
        in_game: weft.Condition = s.in_state(screen, "Game")
        enter: weft.Schedule = screen.on_enter("Game")
        assert now == "Game" and in_game is not None and enter is not None
        return (p.x if p is not None else 0.0) + n + sum(rows) + stale + int(node)
'''

# Each line marked "# E: <text>" must draw exactly one mypy error
# containing <text>; no other line may draw one.
BAD = '''
import ctypes

import weft
from weft import write


class Position(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]


w = weft.World()
w.register(Position)
w.spawn_entity()  # E: "World" has no attribute "spawn_entity"
message: int = w.last_error  # E: expression has type "str", variable has type "int"
w.despawn("entity")  # E: Argument 1 to "despawn" of "World" has incompatible type "str"
w.schedule(3)  # E: Argument 1 to "schedule" of "_SchedulesWorld" has incompatible type "int"
w.get(1, Position).x  # E: Item "None" of "Optional[Position]" has no attribute "x"
w.query(write(Position)).count().upper()  # E: "int" has no attribute "upper"
weft.ERR_NO_SUCH_STATUS  # E: Module has no attribute "ERR_NO_SUCH_STATUS"
'''


def mypy_env():
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "PYTHONPATH")}
    env["MYPYPATH"] = PKG_DIR
    return env


class TestStatusNames(unittest.TestCase):
    def test_spelled_out_names_are_the_runtime_ones(self):
        # _abi.py defines ERR_* in a loop over STATUS_NAMES and lists them
        # again under TYPE_CHECKING for type checkers: the lists must agree.
        with open(os.path.join(PKG_DIR, "weft", "_abi.py")) as f:
            tree = ast.parse(f.read())
        declared = []
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
                declared += [s.target.id for s in node.body if isinstance(s, ast.AnnAssign)]
        runtime = [n[len("WEFT_"):] for n in weft.STATUS_NAMES if n != "WEFT_OK"]
        self.assertEqual(declared, runtime)
        for name in runtime:
            self.assertEqual(getattr(weft, name), weft.STATUS_NAMES.index("WEFT_" + name))


class TestMypy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.environ.get("WEFT_REQUIRE_TYPES") != "1" \
                and os.environ.get("WEFT_TEST_TYPES") != "1":
            raise unittest.SkipTest("run as test_python_types (or set WEFT_TEST_TYPES=1)")
        missing = lacking("types")
        if missing:
            why = "%s lacks %s" % (sys.executable, ", ".join(missing))
            if os.environ.get("WEFT_REQUIRE_TYPES") == "1":
                raise AssertionError("WEFT_REQUIRE_TYPES=1 but " + why)
            raise unittest.SkipTest(why)
        cls.tmp = tempfile.mkdtemp(prefix="weft_types_")
        cls.cache = os.path.join(cls.tmp, "cache")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def mypy(self, *args):
        r = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", self.cache,
                            "--no-error-summary", "--show-error-codes", *args],
                           env=mypy_env(), cwd=self.tmp, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
        return r.returncode, r.stdout

    def check_file(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path

    def test_the_package_itself_is_clean(self):
        rc, out = self.mypy("-p", "weft")
        self.assertEqual((rc, out), (0, ""))

    def test_correct_user_code_passes(self):
        rc, out = self.mypy("--follow-imports=silent", "--disallow-untyped-calls",
                            self.check_file("good.py", GOOD))
        self.assertEqual((rc, out), (0, ""))

    def test_mistakes_in_user_code_are_reported(self):
        path = self.check_file("bad.py", BAD)
        rc, out = self.mypy("--follow-imports=silent", path)
        self.assertEqual(rc, 1, out)
        expected = {}
        for lineno, line in enumerate(BAD.split("\n"), start=1):
            m = re.search(r"# E: (.*)$", line)
            if m:
                expected[lineno] = m.group(1)
        got = {}
        for line in out.splitlines():
            m = re.match(r"bad\.py:(\d+): error: (.*)$", line.replace(path, "bad.py"))
            if m:
                got.setdefault(int(m.group(1)), []).append(m.group(2))
        self.assertEqual(sorted(got), sorted(expected), out)
        for lineno, text in expected.items():
            self.assertEqual(len(got[lineno]), 1, out)
            self.assertIn(text, got[lineno][0])


if __name__ == "__main__":
    unittest.main()
