#!/usr/bin/env python3
# bench/python_columns.py - p += v from a Python system: numpy column arrays vs the per-element loop vs the same system in C, in one run, as ratios.
# SPDX-License-Identifier: MIT
"""p += v over N entities (default 100,000) from a system, four ways, in
the same world and the same run:

  C            bench_py_move (bench/py_columns_system.c), the baseline
  numpy        Chunk.array per column, p["x"] += v["x"]; p["y"] += v["y"]
  numpy pairs  Chunk.array(term, dtype=(float32, 2)): p += v on (n, 2) arrays
  per-element  Chunk.column ctypes arrays, p[i].x += v[i].x; ... per row

Each is a schedule with that one system; the time of Schedule.run() is
measured (median of --runs after a warm-up run) and printed as ns per
entity and as ratios. Targets (this script's own; bench/targets.txt holds
weft_bench's): numpy within 3x of C, per-element at least 100x slower than
numpy, both judged on the faster numpy way. p["x"] += v["x"] works on one
float of every 8-byte row (a strided loop in numpy), so it is reported
beside the whole-row form, which numpy runs as one contiguous loop. A miss
fails the run (exit 4). Every way must leave the same positions (checked
at the end; that check always fails the run).

Then p += v * dt from a numpy system (Chunk.array with dtype=(float32, 2))
is timed against the same statement on plain numpy arrays, at 1, 100,000
and 1,000,000 entities, in pairs of 5-run blocks (each way warm, both
under the same load): targets <= 1.3x at 100,000,
<= 1.1x at 1,000,000, and the fixed cost per schedule run (at 1 entity,
system minus plain) <= 15 us. A miss fails the run (exit 4). --smoke (the
ctest smoke test) checks only that the ways agree.

Run from a Release build with the bench (WEFT_BUILD_BENCH=ON):
  python3 bench/python_columns.py --build build/release
Needs numpy (Debian: python3-numpy). WEFT_LIBRARY, when unset, is set to
the build's libweft.so, the one the C module is linked to."""

import argparse
import ctypes
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TARGET_NUMPY_VS_C = 3.0          # numpy / C at most
TARGET_ELEMENT_VS_NUMPY = 100.0  # per-element / numpy at least
# p += v * dt from a numpy system against the same line on plain numpy
# arrays (no weft): entities -> the most the system may take, as a ratio
TARGET_SYSTEM_VS_PLAIN = ((100000, 1.3), (1000000, 1.1))
# the fixed cost of one schedule run of that system (1 entity), beyond
# plain numpy's, at most (microseconds)
TARGET_OVERHEAD_US = 15.0
BLOCK = 5   # runs of each way back to back, per measured pair (system_vs_plain)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"),
                    help="build directory holding libweft.so and bench/ (default build/release)")
    ap.add_argument("--module", help="path of the C module (default <build>/bench/"
                                     "libweft_bench_pycolumns.so)")
    ap.add_argument("--entities", type=int, default=100000)
    ap.add_argument("--runs", type=int, default=7, help="timed runs per way (median)")
    ap.add_argument("--element-runs", type=int, default=3,
                    help="timed runs of the slow per-element way")
    ap.add_argument("--pair-runs", type=int, default=21,
                    help="pairs of blocks (system, plain numpy) per size (median ratio)")
    ap.add_argument("--smoke", action="store_true",
                    help="check only that the ways agree (tiny sizes): no timing verdict")
    return ap.parse_args(argv)


def system_vs_plain(weft, np, read, write, sizes, pair_runs):
    """p += v * dt from a Python system through Chunk.array against the same
    statement on plain numpy arrays, per size in `sizes`: `pair_runs` pairs
    of blocks (BLOCK schedule runs, then BLOCK runs of the plain statement),
    each block's median timed; the median of the pairs' ratios is reported,
    with the medians of both times. Returns {n: (system_us, plain_us,
    ratio)}."""
    class Pos(ctypes.Structure):
        _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]

    class Vel(ctypes.Structure):
        _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]

    pairs = np.dtype((np.float32, 2))
    dt = 1.0 / 64
    out = {}
    for n in sizes:
        with weft.World() as w:
            w.register(Pos)
            w.register(Vel)
            vel = (Vel * n)(*[Vel(i % 7 * 0.5, 1.0) for i in range(n)])
            w.spawn_bulk(n, (Pos * n)(), vel)

            def move(ctx):
                d = ctx.delta
                for chunk in ctx.iter(0):
                    p, v = chunk.array(0, dtype=pairs), chunk.array(1, dtype=pairs)
                    p += v * d
            s = w.schedule("move")
            s.add_system(move, name="move", query=[write(Pos), read(Vel)])
            p = np.zeros((n, 2), np.float32)
            v = np.frombuffer(vel, np.float32).reshape(n, 2).copy()

            def plain():
                p.__iadd__(v * dt)   # the system's statement, on plain arrays
            for _ in range(3):       # warm-up: build, caches, allocator
                s.run(dt)
                plain()
            ts, tp, ratios = [], [], []
            for _ in range(pair_runs):
                # a block of BLOCK runs of each, back to back (each way warm
                # in the cache, as a system run every frame is); the pair's
                # ratio is of the blocks' medians, so both saw the same load
                bs, bp = [], []
                for _ in range(BLOCK):
                    t0 = time.perf_counter()
                    s.run(dt)
                    bs.append(time.perf_counter() - t0)
                for _ in range(BLOCK):
                    t0 = time.perf_counter()
                    plain()
                    bp.append(time.perf_counter() - t0)
                ms, mp = statistics.median(bs), statistics.median(bp)
                ts.append(ms)
                tp.append(mp)
                ratios.append(ms / mp)
            # both did the same sum: the world's positions equal p
            for chunk in w.query(read(Pos)):
                got = np.asarray(chunk.array(0, dtype=pairs))
                if not np.allclose(got, p[:len(got)]):
                    raise SystemExit("error: the system and plain numpy disagree at n=%d" % n)
        out[n] = (statistics.median(ts) * 1e6, statistics.median(tp) * 1e6,
                  statistics.median(ratios))
    return out


def main(argv):
    args = parse_args(argv)
    if not os.environ.get("WEFT_LIBRARY"):
        os.environ["WEFT_LIBRARY"] = os.path.join(args.build, "libweft.so")
    sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
    import numpy as np
    import weft
    from weft import read, write

    module = args.module or os.path.join(args.build, "bench", "libweft_bench_pycolumns.so")
    c_lib = ctypes.CDLL(module)
    c_move = ctypes.cast(c_lib.bench_py_move, ctypes.c_void_p).value

    class Position(ctypes.Structure):
        _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]

    class Velocity(ctypes.Structure):
        _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]

    n = args.entities
    pairs = np.dtype((np.float32, 2))
    with weft.World() as w:
        w.register(Position)
        w.register(Velocity)
        for i in range(n):
            w.spawn(Position(0, 0), Velocity(i % 7 * 0.5, 1.0))
        terms = [write(Position), read(Velocity)]

        def numpy_fields(ctx):
            for chunk in ctx.iter(0):
                p, v = chunk.array(0), chunk.array(1)
                p["x"] += v["x"]
                p["y"] += v["y"]

        def numpy_pairs(ctx):
            for chunk in ctx.iter(0):
                p, v = chunk.array(0, dtype=pairs), chunk.array(1, dtype=pairs)
                p += v

        def per_element(ctx):
            for chunk in ctx.iter(0):
                p, v = chunk.column(0), chunk.column(1)
                for i in range(chunk.count):
                    p[i].x += v[i].x
                    p[i].y += v[i].y

        ways = [("C", c_move, args.runs), ("numpy", numpy_fields, args.runs),
                ("numpy pairs", numpy_pairs, args.runs),
                ("per-element", per_element, args.element_runs)]
        total_runs = 0
        ns = {}
        for name, fn, runs in ways:
            s = w.schedule("bench " + name)
            s.add_system(fn, name=name.replace(" ", "_").replace("-", "_"), query=terms)
            s.run(0)                      # warm-up (builds the schedule)
            times = []
            for _ in range(runs):
                t0 = time.perf_counter()
                s.run(0)
                times.append(time.perf_counter() - t0)
            total_runs += runs + 1
            ns[name] = statistics.median(times) * 1e9 / n

        # Every way added v once per run: the positions must agree.
        bad = 0
        for chunk in w.query(read(Position), read(Velocity)):
            p, v = chunk.array(0), chunk.array(1)
            bad += int(np.count_nonzero(p["x"] != v["x"] * total_runs))
            bad += int(np.count_nonzero(p["y"] != v["y"] * total_runs))

    print("p += v from a system, %d entities, one table (ns per entity, median):" % n)
    for name, _, runs in ways:
        print("  %-12s %10.2f ns   (%d runs)" % (name, ns[name], runs))
    best = min(ns["numpy"], ns["numpy pairs"])
    r_numpy = best / ns["C"]
    r_elem = ns["per-element"] / best
    print("ratios:")
    print("  numpy (fields) / C      %8.2fx" % (ns["numpy"] / ns["C"]))
    print("  numpy pairs / C         %8.2fx" % (ns["numpy pairs"] / ns["C"]))
    print("  per-element / C         %8.1fx" % (ns["per-element"] / ns["C"]))
    print("  per-element / numpy (fields) %5.1fx" % (ns["per-element"] / ns["numpy"]))
    print("targets (the faster numpy way):")
    print("  numpy / C               %8.2fx   (target <= %.1fx)  %s"
          % (r_numpy, TARGET_NUMPY_VS_C, "ok" if r_numpy <= TARGET_NUMPY_VS_C else "MISS"))
    print("  per-element / numpy     %8.1fx   (target >= %.0fx)  %s"
          % (r_elem, TARGET_ELEMENT_VS_NUMPY,
             "ok" if r_elem >= TARGET_ELEMENT_VS_NUMPY else "MISS"))
    if bad:
        print("error: %d coordinates differ from v * runs: the ways did not do the same work"
              % bad, file=sys.stderr)
        return 1
    missed = []
    if r_numpy > TARGET_NUMPY_VS_C:
        missed.append("numpy / C")
    if r_elem < TARGET_ELEMENT_VS_NUMPY:
        missed.append("per-element / numpy")

    sizes = [1] + [size for size, _ in TARGET_SYSTEM_VS_PLAIN]
    if args.smoke:
        sizes = [1, min(n, 3000)]
    got = system_vs_plain(weft, np, read, write, sizes, 5 if args.smoke else args.pair_runs)
    print("p += v * dt: numpy system (Chunk.array) vs plain numpy arrays "
          "(median of %d pairs of %d-run blocks):" % (5 if args.smoke else args.pair_runs,
                                                      BLOCK))
    for size in sizes:
        ts, tp, ratio = got[size]
        print("  %8d entities  system %9.1f us  plain %9.1f us  ratio %5.2fx"
              % (size, ts, tp, ratio))
    overhead = got[1][0] - got[1][1]
    print("targets (system / plain numpy):")
    for size, target in TARGET_SYSTEM_VS_PLAIN:
        if size not in got:
            continue
        ratio = got[size][2]
        ok = ratio <= target
        print("  %8d entities      %8.2fx   (target <= %.1fx)  %s"
              % (size, ratio, target, "ok" if ok else "MISS"))
        if not ok:
            missed.append("system / plain numpy at %d" % size)
    ok = overhead <= TARGET_OVERHEAD_US
    print("  per-run overhead     %8.1f us  (target <= %.0f us; 1 entity, system - plain)  %s"
          % (overhead, TARGET_OVERHEAD_US, "ok" if ok else "MISS"))
    if not ok:
        missed.append("per-run overhead")
    if args.smoke:
        print("smoke run: the ways agree; timings are not judged")
        return 0
    if missed:
        print("error: missed targets: %s" % ", ".join(missed), file=sys.stderr)
        return 4
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
