# bindings/python/examples/simulation.py - a small weft simulation driven from Python (ctest smoke test).
# SPDX-License-Identifier: MIT
"""Spawns 10k movers, runs a few frames of query-based movement, spawns and
despawns through a command buffer, counts deaths with an observer, builds a
small hierarchy, and prints a summary. Exits non-zero if a check fails.

Run: WEFT_LIBRARY=/path/to/libweft.so PYTHONPATH=bindings/python \
     python3 bindings/python/examples/simulation.py [N]
"""
import ctypes
import sys
import time

import weft


class Position(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]


class Velocity(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]


class Lifetime(ctypes.Structure):
    _fields_ = [("frames", ctypes.c_int32)]


class Time(ctypes.Structure):
    _fields_ = [("dt", ctypes.c_float), ("frame", ctypes.c_int32)]


class Death(ctypes.Structure):
    _fields_ = [("entity", ctypes.c_uint64), ("x", ctypes.c_float), ("y", ctypes.c_float)]


def main(n=10_000, frames=5):
    t0 = time.perf_counter()
    with weft.World(entity_capacity_hint=n) as w:
        w.register(Position)
        w.register(Velocity)
        w.register(Lifetime)
        w.register(Time)
        deaths = w.message_type(Death)
        w.resource_insert(Time(0.5, 0))

        # Observer: every removal of Lifetime (i.e. every despawn of a
        # mortal entity) writes a Death message.
        def on_death(trigger):
            p = w.get(trigger.entity, Position)
            w.write_message(deaths, Death(trigger.entity, p.x, p.y))
        w.observe(weft.REMOVE, on_death, component=Lifetime)

        # 10k movers in one bulk spawn; every 10th is mortal.
        pos = (Position * n)(*[Position(i % 100, i // 100) for i in range(n)])
        vel = (Velocity * n)(*[Velocity(1.0, (i % 3) - 1.0) for i in range(n)])
        ids = w.spawn_bulk(n, pos, vel)
        for i in range(0, n, 10):
            w.insert(ids[i], Lifetime(2 + i % 4))

        move = w.query(weft.write(Position), weft.read(Velocity))
        age = w.query(weft.write(Lifetime))
        moved_rows = 0
        reader = deaths.reader()
        dead_seen = 0
        spawned = 0
        for frame in range(frames):
            dt = w.resource_get(Time).dt
            # movement: one Python loop per chunk over zero-copy columns
            for chunk in move:
                p = chunk.column(0)
                v = chunk.column(1)
                for i in range(chunk.count):
                    p[i].x += v[i].x * dt
                    p[i].y += v[i].y * dt
                moved_rows += chunk.count
            # ageing: despawns and spawns go through a command buffer
            with w.commands() as cmds:
                for chunk in age:
                    life = chunk.column(0)
                    ents = chunk.entities
                    for i in range(chunk.count):
                        life[i].frames -= 1
                        if life[i].frames <= 0:
                            cmds.despawn(ents[i])
                            cmds.spawn(Position(0, 0), Velocity(0, 1))
                            spawned += 1
            dead_seen += sum(1 for _ in reader)
            w.update_messages()
            w.resource_get_mut(Time).frame += 1

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
        stats = w.stats()
        first = w.get(ids[1], Position)
        summary = {
            "entities spawned": n + spawned + 10,
            "frames": frames,
            "rows moved": moved_rows,
            "deaths observed": dead_seen,
            "replacements spawned": spawned,
            "squad size (descendants)": len(tree),
            "despawned with the leader": before - after,
            "live entities": stats.live_entities,
            "archetypes": stats.archetypes,
            "live bytes": stats.live_bytes,
            "entity 1 position": (round(first.x, 2), round(first.y, 2)),
            "world hash": "%016x" % w.hash(),
            "seconds": round(time.perf_counter() - t0, 3),
        }
        for k, v in summary.items():
            print("%-28s %s" % (k, v))

        mortal = len(range(0, n, 10))
        ok = (dead_seen == spawned and 0 < spawned <= mortal
              and len(tree) == 9 and before - after == 10
              and stats.live_entities == n and first.x == 1 + 1.0 * 0.5 * frames)
        if not ok:
            print("simulation: FAILED a consistency check", file=sys.stderr)
            return 1
    print("simulation: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000))
