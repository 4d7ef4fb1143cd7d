# bindings/python/examples/simulation.py - a small weft simulation driven from Python (ctest smoke test).
# SPDX-License-Identifier: MIT
"""Spawns 10k movers and runs a few frames of a schedule of Python systems:
movement, ageing (despawns and respawns through the system's command
buffer, a Death message per despawn), a death counter reading the
messages, a one-time census behind a run_once condition, and a fixed-step
"physics" schedule run by the frame loop. Then builds a small hierarchy
and prints a summary. Exits non-zero if a check fails.

The per-entity math works on whole columns with numpy (Chunk.array:
zero-copy structured arrays, one numpy operation per column per chunk).
Without numpy, or with --per-element, the same systems run row by row over
ctypes columns (Chunk.column), which shows the plain loop and gives the
same result.

Run: WEFT_LIBRARY=/path/to/libweft.so PYTHONPATH=bindings/python \
     python3 bindings/python/examples/simulation.py [N] [THREADS] [--per-element]
"""
import ctypes
import sys
import time

import weft
from weft import read, write, Changed

try:
    import numpy as np
except ImportError:      # the binding works without numpy: rows, not columns
    np = None


class Position(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]


class Velocity(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]


class Lifetime(ctypes.Structure):
    _fields_ = [("frames", ctypes.c_int32)]


class Clock(ctypes.Structure):
    _fields_ = [("frame", ctypes.c_int32), ("fixed_steps", ctypes.c_int32),
                ("moved_rows", ctypes.c_int64)]


class Death(ctypes.Structure):
    _fields_ = [("entity", ctypes.c_uint64), ("x", ctypes.c_float), ("y", ctypes.c_float)]


def main(n=10_000, threads=2, frames=5, dt=0.5, columns=True):
    t0 = time.perf_counter()
    columns = columns and np is not None
    with weft.World(entity_capacity_hint=n) as w:
        w.register(Position)
        w.register(Velocity)
        w.register(Lifetime)
        w.register(Clock)
        deaths = w.message_type(Death)
        w.resource_insert(Clock(0, 0, 0))
        # Python systems still run on this thread; a weft built without
        # threads (WEFT_THREADS=OFF) runs everything on it
        w.set_threads(min(threads, weft.max_threads()))

        # Observer: counts every removal of Lifetime (every mortal despawn).
        observed = []
        w.observe(weft.REMOVE, lambda trigger: observed.append(trigger.entity),
                  component=Lifetime)

        # 10k movers in one bulk spawn; every 10th is mortal.
        pos = (Position * n)(*[Position(i % 100, i // 100) for i in range(n)])
        vel = (Velocity * n)(*[Velocity(1.0, (i % 3) - 1.0) for i in range(n)])
        ids = w.spawn_bulk(n, pos, vel)
        for i in range(0, n, 10):
            w.insert(ids[i], Lifetime(2 + i % 4))

        # the app drives the world: "update" runs right after Update, the
        # fixed order (physics) 0..k times before it
        app = weft.App(w, fixed_step=0.25, max_delta=1.0)
        update = app.insert_schedule("update", after="Update")
        stats = {"census": 0, "deaths read": 0, "respawned": 0}

        def move_columns(ctx):
            # numpy over whole columns: zero-copy views of this chunk's rows
            d = ctx.delta
            rows = 0
            for chunk in ctx.iter(0):
                p, v = chunk.array(0), chunk.array(1)   # v is read-only
                p["x"] += v["x"] * d
                p["y"] += v["y"] * d
                rows += chunk.count
            clock = ctx.resource_mut(Clock)
            clock.moved_rows += rows
            clock.frame += 1

        def move_rows(ctx):
            # the same, one Python loop per chunk over ctypes columns
            d = ctx.delta
            rows = 0
            for chunk in ctx.iter(0):
                p, v = chunk.column(0), chunk.column(1)
                for i in range(chunk.count):
                    p[i].x += v[i].x * d
                    p[i].y += v[i].y * d
                rows += chunk.count
            clock = ctx.resource_mut(Clock)
            clock.moved_rows += rows
            clock.frame += 1

        move = update.add_system(move_columns if columns else move_rows, name="move",
                                 query=[write(Position), read(Velocity)],
                                 resources=[write(Clock)])

        def die(ctx, e, x, y):
            ctx.write(deaths, Death(e, x, y))
            ctx.commands.despawn(e)
            ctx.commands.spawn(Position(0, 0), Velocity(0, 1))
            stats["respawned"] += 1

        def age_columns(ctx):
            # decrement every lifetime at once; only the rows that die are
            # visited one by one, to record their commands and messages
            for chunk in ctx.iter(0):
                life, p, ents = chunk.array(0), chunk.array(1), chunk.entities
                life["frames"] -= 1
                for i in np.flatnonzero(life["frames"] <= 0).tolist():
                    die(ctx, ents[i], float(p["x"][i]), float(p["y"][i]))

        def age_rows(ctx):
            for chunk in ctx.iter(0):
                life, p, ents = chunk.column(0), chunk.column(1), chunk.entities
                for i in range(chunk.count):
                    life[i].frames -= 1
                    if life[i].frames <= 0:
                        die(ctx, ents[i], p[i].x, p[i].y)

        age = update.add_system(age_columns if columns else age_rows, name="age",
                                query=[write(Lifetime), read(Position)],
                                messages=[write(deaths)], commands=True, after=move)

        @update.system(messages=[read(deaths)], after=age)
        def count_deaths(ctx):
            stats["deaths read"] += sum(1 for _ in ctx.messages(deaths))

        # A census that runs once, after the ageing commands were applied
        # (auto sync point after `age`, which records commands).
        @update.system(query=[read(Position)], after=age, run_if=update.run_once())
        def census(ctx):
            stats["census"] = ctx.count(0)

        # Fixed-step schedule: runs floor(accumulated / step) times a frame,
        # placed by the app after FixedUpdate.
        physics = app.insert_schedule("physics", after="FixedUpdate")

        @physics.system(query=[read(Position), Changed(Position)], resources=[write(Clock)])
        def settle(ctx):
            ctx.resource_mut(Clock).fixed_steps += 1

        update.set_profiling(True)
        for _ in range(frames):
            app.update(dt)   # updates messages, runs physics, then update

        order = update.order_of()
        ambiguities = update.ambiguities()
        move_stats = move.stats()

        # a hierarchy: a squad leader with members; despawning the leader
        # despawns the squad
        leader = w.spawn(Position(0, 0))
        members = [w.spawn(Position(i, 0), Velocity(0, 0)) for i in range(8)]
        for m in members:
            w.set_parent(m, leader)
        sub = w.spawn(Position(1, 1))
        w.set_parent(sub, members[0])
        tree = w.descendants(leader)
        before = w.stats().live_entities
        w.despawn(leader)
        after = w.stats().live_entities

        w.check()
        ws = w.stats()
        clock = w.resource_get(Clock)
        first = w.get(ids[1], Position)
        spawned = stats["respawned"]
        summary = {
            "per-entity math": "numpy columns" if columns else "per-element (ctypes rows)",
            "entities spawned": n + spawned + 10,
            "threads": w.threads,
            "frames": clock.frame,
            "fixed steps": clock.fixed_steps,
            "system order": " -> ".join(order),
            "ambiguities": len(ambiguities),
            "rows moved": clock.moved_rows,
            "move: runs / ms": "%d / %.1f" % (move_stats.runs, move_stats.total_ns / 1e6),
            "census (first frame)": stats["census"],
            "deaths read / observed": "%d / %d" % (stats["deaths read"], len(observed)),
            "replacements spawned": spawned,
            "squad size (descendants)": len(tree),
            "despawned with the leader": before - after,
            "live entities": ws.live_entities,
            "archetypes": ws.archetypes,
            "live bytes": ws.live_bytes,
            "entity 1 position": (round(first.x, 2), round(first.y, 2)),
            "world hash": "%016x" % w.hash(),
            "seconds": round(time.perf_counter() - t0, 3),
        }
        for k, v in summary.items():
            print("%-28s %s" % (k, v))

        mortal = len(range(0, n, 10))
        ok = (stats["deaths read"] == spawned == len(observed)
              and 0 < spawned <= mortal
              and stats["census"] == n
              and clock.frame == frames and move_stats.runs == frames
              and clock.fixed_steps == int(frames * dt / 0.25)
              and clock.moved_rows >= n * frames
              and order.index("move") < order.index("age") < order.index("count_deaths")
              and len(tree) == 9 and before - after == 10
              and ws.live_entities == n and first.x == 1 + 1.0 * dt * frames)
        if not ok:
            print("simulation: FAILED a consistency check", file=sys.stderr)
            return 1
    print("simulation: ok")
    return 0


if __name__ == "__main__":
    argv = [a for a in sys.argv[1:] if a != "--per-element"]
    sys.exit(main(int(argv[0]) if len(argv) > 0 else 10_000,
                  int(argv[1]) if len(argv) > 1 else 2,
                  columns="--per-element" not in sys.argv[1:]))
