/* examples/06_observers_hierarchy.c - lifecycle hooks, observers, custom events, ChildOf trees.
 * SPDX-License-Identifier: MIT
 *
 * A tiny UI tree: window -> {panel -> {ok, cancel}, sidebar}. A click on a
 * button propagates up the tree to the observers of its ancestors; the
 * panel stops it. Despawning the panel despawns its subtree.
 */
#include <stdio.h>
#include <string.h>

#include "weft.h"

typedef struct Name { char s[16]; } Name;
typedef struct Click { int32_t button; } Click;

static int g_added, g_despawned, g_heard;

/* Hook on Name: runs before any observer of the same event. */
static void on_add_name(weft_world *w, weft_entity e, weft_component c, void *user)
{
    (void)w, (void)e, (void)c, (void)user;
    g_added++;
}

/* Observer of DESPAWN on Name: the value is still readable. */
static void on_despawn(weft_world *w, weft_trigger *t, void *user)
{
    const Name *n = weft_get(w, t->entity, t->component, sizeof *n);
    (void)user;
    printf("  despawned %s\n", n != NULL ? n->s : "?");
    g_despawned++;
}

/* Observer of the custom Click event on one entity; `user` is its name. */
static void on_click(weft_world *w, weft_trigger *t, void *user)
{
    const Click *c = t->payload;
    (void)w;
    printf("  %s heard click %d (from #%u)\n", (const char *)user, (int)c->button,
           (unsigned)weft_entity_index(t->original));
    g_heard++;
    if (strcmp(user, "panel") == 0) {
        t->propagate = false; /* the window will not hear it */
    }
}

static weft_component g_name;

static weft_entity node(weft_world *w, const char *name, weft_entity parent)
{
    Name n;
    memset(&n, 0, sizeof n);
    strncpy(n.s, name, sizeof n.s - 1);
    weft_value v[] = {{g_name, sizeof n, &n}};
    weft_entity e = weft_spawn_with(w, v, 1);
    if (e != 0 && parent != 0 && weft_set_parent(w, e, parent) != WEFT_OK) {
        return 0;
    }
    return e;
}

int main(void)
{
    weft_world *w = weft_world_create(NULL);
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = "Name";
    d.size = sizeof(Name);
    d.lifecycle.on_add = on_add_name;
    g_name = weft_component_register(w, &d);

    weft_observer_desc od;
    memset(&od, 0, sizeof od);
    od.event = WEFT_EVENT_DESPAWN;
    od.component = g_name;
    od.fn = on_despawn;
    weft_event_desc ed;
    memset(&ed, 0, sizeof ed);
    ed.name = "Click";
    ed.payload_size = sizeof(Click);
    weft_event click = weft_event_register(w, &ed);
    if (g_name == 0 || weft_observer_create(w, &od) == NULL || click == 0) {
        fprintf(stderr, "setup: %s\n", weft_last_error(w));
        return 1;
    }

    weft_entity window = node(w, "window", 0);
    weft_entity panel = node(w, "panel", window);
    weft_entity ok_btn = node(w, "ok", panel);
    weft_entity cancel = node(w, "cancel", panel);
    weft_entity sidebar = node(w, "sidebar", window);
    if (!window || !panel || !ok_btn || !cancel || !sidebar) {
        fprintf(stderr, "tree: %s\n", weft_last_error(w));
        return 1;
    }
    int32_t kids = 0;
    weft_children(w, window, &kids);
    weft_entity below[8];
    int64_t n_below = weft_descendants(w, window, weft_child_of(w), below, 8);
    printf("tree: %d named (hook), window has %d children and %lld descendants, "
           "ok's parent is panel: %s\n",
           g_added, (int)kids, (long long)n_below, weft_parent(w, ok_btn) == panel ? "yes" : "no");

    /* Entity-targeted observers on the button, the panel and the window. */
    weft_entity targets[] = {ok_btn, panel, window};
    const char *names[] = {"ok", "panel", "window"};
    for (int i = 0; i < 3; i++) {
        memset(&od, 0, sizeof od);
        od.event = click;
        od.entity = targets[i];
        od.fn = on_click;
        od.user = (void *)names[i];
        if (weft_observer_create(w, &od) == NULL) {
            return 1;
        }
    }
    printf("click on ok, propagating:\n");
    Click c = {1};
    if (weft_trigger_event(w, click, ok_btn, &c, sizeof c, true) != WEFT_OK) {
        return 1;
    }

    printf("despawn panel:\n");
    if (weft_despawn(w, panel) != WEFT_OK) {
        return 1;
    }
    weft_children(w, window, &kids);
    int ok = g_added == 5 && kids == 1 && n_below == 4 && g_heard == 2 && g_despawned == 3 &&
             !weft_is_alive(w, ok_btn) && weft_is_alive(w, sidebar);
    weft_world_destroy(w);
    printf("observers and hierarchy: %s\n", ok ? "ok" : "UNEXPECTED");
    return ok ? 0 : 1;
}
