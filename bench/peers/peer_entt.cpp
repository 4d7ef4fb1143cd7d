/* bench/peers/peer_entt.cpp - EnTT in the peer comparison (C++17, EnTT 3.x).
 * SPDX-License-Identifier: MIT
 *
 * Idiomatic EnTT: registry.create + emplace per component, the range forms
 * of create and insert for bulk creation, destroy, emplace/remove (an empty
 * struct for the tag, which EnTT stores without values), get<T...>, and a
 * view's each() for iteration. The default 32-bit entity holds at most
 * 2^20 - 1 live entities, so larger N runs on a 64-bit entity type.
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" {
#include "peer_common.h"
}
#include "entt.hpp"

namespace {

struct tag_t {};

template <typename Reg> std::vector<typename Reg::entity_type> spawn_all(Reg &r, uint32_t n,
                                                                         bool with_hp)
{
    std::vector<typename Reg::entity_type> e(n);
    for (uint32_t i = 0; i < n; i++) {
        e[i] = r.create();
        r.template emplace<peer_pos>(e[i], peer_pos_of(i));
        r.template emplace<peer_vel>(e[i], peer_vel_of(i));
        if (with_hp) {
            r.template emplace<peer_health>(e[i], peer_health_of(i));
        }
    }
    return e;
}

template <typename Reg, typename Vec> uint64_t sum_all(Reg &r, const Vec &e)
{
    uint64_t sum = 0;
    for (auto h : e) {
        const auto *p = r.template try_get<peer_pos>(h);
        const auto *v = r.template try_get<peer_vel>(h);
        if (p == nullptr || v == nullptr) {
            peer_fail("entt", "entity lost");
        }
        sum += peer_sum_pos(p) + peer_sum_vel(v);
    }
    return sum;
}

template <typename Reg> int run(const char *sc, uint32_t n, double *ns, uint64_t *sum)
{
    using entity = typename Reg::entity_type;
    Reg r;
    uint64_t t0 = 0;
    uint64_t t1 = 0;
    int toggle = 0; /* one storage for every component: the toggle variants run as usual */
    if (std::strcmp(sc, "create") == 0) {
        std::vector<entity> e(n);
        t0 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            e[i] = r.create();
            r.template emplace<peer_pos>(e[i], peer_pos_of(i));
            r.template emplace<peer_vel>(e[i], peer_vel_of(i));
        }
        t1 = peer_now_ns();
        *sum = sum_all(r, e);
    } else if (std::strcmp(sc, "create_bulk") == 0) {
        std::vector<peer_pos> p(n);
        std::vector<peer_vel> v(n);
        std::vector<entity> e(n);
        for (uint32_t i = 0; i < n; i++) {
            p[i] = peer_pos_of(i);
            v[i] = peer_vel_of(i);
        }
        t0 = peer_now_ns();
        r.create(e.begin(), e.end());
        r.template insert<peer_pos>(e.begin(), e.end(), p.begin());
        r.template insert<peer_vel>(e.begin(), e.end(), v.begin());
        t1 = peer_now_ns();
        *sum = sum_all(r, e);
    } else if (std::strcmp(sc, "destroy") == 0) {
        auto e = spawn_all(r, n, false);
        t0 = peer_now_ns();
        for (auto h : e) {
            r.destroy(h);
        }
        t1 = peer_now_ns();
        uint64_t alive = 0;
        for (auto h : e) {
            alive += r.valid(h);
        }
        *sum = (uint64_t)n * 1000u + alive;
    } else if (peer_addrem_kind(sc, &toggle) != 0) {
        bool tag = peer_addrem_kind(sc, &toggle) == 2;
        auto e = spawn_all(r, n, false);
        uint64_t with = 0;
        uint64_t left = 0;
        uint64_t mid0 = 0;
        uint64_t mid1 = 0;
        if (tag) {
            t0 = peer_now_ns();
            for (auto h : e) {
                r.template emplace<tag_t>(h);
            }
            mid0 = peer_now_ns();
            for (auto h : e) {
                with += r.template all_of<tag_t>(h);
            }
            mid1 = peer_now_ns();
            for (auto h : e) {
                r.template remove<tag_t>(h);
            }
            t1 = peer_now_ns();
            for (auto h : e) {
                left += r.template all_of<tag_t>(h);
            }
        } else {
            t0 = peer_now_ns();
            for (uint32_t i = 0; i < n; i++) {
                r.template emplace<peer_health>(e[i], peer_health_of(i));
            }
            mid0 = peer_now_ns();
            for (auto h : e) {
                const auto *hp = r.template try_get<peer_health>(h);
                with += hp ? peer_sum_health(hp) : 0u;
            }
            mid1 = peer_now_ns();
            for (auto h : e) {
                r.template remove<peer_health>(h);
            }
            t1 = peer_now_ns();
            for (auto h : e) {
                left += r.template all_of<peer_health>(h);
            }
        }
        t1 -= mid1 - mid0;
        *sum = with + 1000003u * left + sum_all(r, e);
    } else if (std::strncmp(sc, "get", 3) == 0) {
        int k = sc[3] - '0';
        uint32_t *order = std::strstr(sc, "_shuf") ? peer_shuffled_order(n) : nullptr;
        auto e = spawn_all(r, n, true);
        uint64_t acc = 0;
        t0 = peer_now_ns();
        if (k == 1) {
            for (uint32_t i = 0; i < n; i++) {
                auto h = e[order ? order[i] : i];
                acc += peer_sum_pos(&r.template get<peer_pos>(h));
            }
        } else if (k == 2) {
            for (uint32_t i = 0; i < n; i++) {
                auto h = e[order ? order[i] : i];
                auto [p, v] = r.template get<peer_pos, peer_vel>(h);
                acc += peer_sum_pos(&p) + peer_sum_vel(&v);
            }
        } else {
            for (uint32_t i = 0; i < n; i++) {
                auto h = e[order ? order[i] : i];
                auto [p, v, hp] = r.template get<peer_pos, peer_vel, peer_health>(h);
                acc += peer_sum_pos(&p) + peer_sum_vel(&v) + peer_sum_health(&hp);
            }
        }
        t1 = peer_now_ns();
        *sum = acc;
        std::free(order);
    } else if (std::strcmp(sc, "iterate") == 0) {
        auto e = spawn_all(r, n, false);
        uint64_t best = UINT64_MAX;
        for (int pass = 0; pass < 10; pass++) {
            uint64_t a = peer_now_ns();
            r.template view<peer_pos, const peer_vel>().each(
                [](peer_pos &p, const peer_vel &v) {
                    p.x += v.x;
                    p.y += v.y;
                });
            uint64_t c = peer_now_ns();
            best = c - a < best ? c - a : best;
        }
        t1 = best;
        *sum = sum_all(r, e);
    } else if (std::strcmp(sc, "bytes") == 0 || std::strcmp(sc, "bytes_noticks") == 0) {
        std::vector<entity> e(n); /* the caller's handles, touched: not counted */
        uint64_t r0 = peer_rss_bytes();
        for (uint32_t i = 0; i < n; i++) {
            e[i] = r.create();
            r.template emplace<peer_pos>(e[i], peer_pos_of(i));
            r.template emplace<peer_vel>(e[i], peer_vel_of(i));
        }
        uint64_t r1 = peer_rss_bytes();
        t1 = r1 > r0 ? r1 - r0 : 0;
        *sum = sum_all(r, e);
    } else {
        return -1;
    }
    *ns = (double)(t1 - t0) / (double)n;
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    const char *sc;
    uint32_t n;
    if (!peer_args(argc, argv, &sc, &n)) {
        return 2;
    }
    for (int round = 0; round < 2; round++) {
        double ns;
        uint64_t sum;
        int rc = n < (1u << 20) ? run<entt::registry>(sc, n, &ns, &sum)
                                : run<entt::basic_registry<std::uint64_t>>(sc, n, &ns, &sum);
        if (rc < 0) {
            std::fprintf(stderr, "peer_entt: unknown scenario %s\n", sc);
            return 2;
        }
        peer_report(sc, "entt", round, ns, sum);
    }
    return 0;
}
