// examples/10_cpp_consumer.cpp - weft.h from C++17: RAII ownership, typed helpers, lambda systems.
// SPDX-License-Identifier: MIT
//
// weft.h is plain C with extern "C"; a few lines of C++ make it pleasant:
// unique_ptr owns the world, a template registers a type by its size, and
// capture-less lambdas are systems (they convert to function pointers; state
// travels in the `user` pointer). Systems must not throw through weft.
#include "weft.h"

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct WorldDeleter {
    void operator()(weft_world *w) const { weft_world_destroy(w); }
};
using World = std::unique_ptr<weft_world, WorldDeleter>;

void check(weft_world *w, weft_status st, const char *what)
{
    if (st != WEFT_OK) {
        throw std::runtime_error(std::string(what) + ": " + weft_status_name(st) + ": " +
                                 weft_last_error(w));
    }
}

template <typename T> weft_component component(weft_world *w, const char *name)
{
    weft_component_desc d{};
    d.name = name;
    d.size = sizeof(T);
    d.align = alignof(T);
    weft_component c = weft_component_register(w, &d);
    if (c == WEFT_COMPONENT_NONE) {
        check(w, weft_last_status(w), name);
    }
    return c;
}

template <typename T> T *column(weft_iter &it, int32_t term)
{
    return static_cast<T *>(weft_iter_field_mut(&it, term, sizeof(T)));
}

struct Position { float x, y; };
struct Velocity { float x, y; };
struct Ids { weft_component pos, vel; };

} // namespace

int main()
{
    try {
        World world(weft_world_create(nullptr));
        weft_world *w = world.get();
        if (!w) {
            return 1;
        }
        Ids ids{component<Position>(w, "Position"), component<Velocity>(w, "Velocity")};

        std::vector<Position> pos(1000, Position{0, 0});
        std::vector<Velocity> vel(1000, Velocity{1, 2});
        weft_value cols[] = {{ids.pos, sizeof(Position), pos.data()},
                             {ids.vel, sizeof(Velocity), vel.data()}};
        check(w, weft_spawn_bulk(w, cols, 2, 1000, nullptr), "spawn_bulk");

        weft_query_desc q{};
        q.terms[0] = weft_term{ids.pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0, 0};
        q.terms[1] = weft_term{ids.vel, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0};
        q.term_count = 2;
        weft_system_desc sd{};
        sd.name = "movement";
        sd.queries = &q;
        sd.query_count = 1;
        sd.fn = [](weft_system_ctx *ctx, void *) {
            float dt = static_cast<float>(weft_system_delta(ctx));
            weft_iter it;
            if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
                return;
            }
            while (weft_iter_next(&it)) {
                Position *p = column<Position>(it, 0);
                const auto *v = static_cast<const Velocity *>(
                    weft_iter_field(&it, 1, sizeof(Velocity)));
                for (int32_t i = 0; i < weft_iter_count(&it); i++) {
                    p[i].x += v[i].x * dt;
                    p[i].y += v[i].y * dt;
                }
            }
        };
        weft_schedule *update = weft_schedule_create(w, "update");
        if (!update || weft_schedule_add_system(update, &sd) == WEFT_NODE_NONE) {
            check(w, weft_last_status(w), "schedule");
        }
        // two workers, or the calling thread in a build without threads
        check(w, weft_world_set_threads(w, weft_max_threads() < 2 ? 1 : 2), "set_threads");
        for (int frame = 0; frame < 4; frame++) {
            check(w, weft_schedule_run(update, 0.5), "run");
        }

        weft_entity first = WEFT_ENTITY_NONE;
        weft_query *all = weft_query_create(w, &q);
        weft_iter it;
        if (!all) {
            check(w, weft_last_status(w), "query");
        }
        check(w, weft_query_iter(w, all, &it), "iter");
        if (weft_iter_next(&it)) {
            first = weft_iter_entities(&it)[0];
            weft_iter_fini(&it);
        }
        const auto *p = static_cast<const Position *>(weft_get(w, first, ids.pos, sizeof(Position)));
        std::printf("c++ consumer: %lld entities, first at (%.1f, %.1f)\n",
                    static_cast<long long>(weft_query_count(w, all)), p ? p->x : -1.0,
                    p ? p->y : -1.0);
        return p && p->x == 2.0f && p->y == 4.0f ? 0 : 1;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "c++ consumer: %s\n", e.what());
        return 1;
    }
}
