// tests/abi/test_abi_cpp.cpp - weft.h compiles as C++ (extern "C", no
// C-only constructs) and links from a C++ program.
// SPDX-License-Identifier: MIT
#include "weft.h"

#include <cstdio>

int main()
{
    weft_world *w = weft_world_create(nullptr);
    if (!w) {
        return 1;
    }
    weft_component_desc d{};
    d.name = "Position";
    d.size = 2 * sizeof(float);
    weft_component pos = weft_component_register(w, &d);
    float p[2] = {1.0f, 2.0f};
    weft_value v{pos, sizeof p, p};
    weft_entity e = weft_spawn_with(w, &v, 1);
    const float *q = static_cast<const float *>(weft_get(w, e, pos, sizeof p));
    bool ok = q && q[0] == 1.0f && q[1] == 2.0f && weft_world_check(w) == WEFT_OK;
    std::printf("c++ consumer: %s\n", ok ? "ok" : "FAILED");
    weft_world_destroy(w);
    return ok ? 0 : 1;
}
