/* src/schedule/export.c - the last run as Chrome trace-event JSON and the
 * built schedule as Graphviz DOT.
 * SPDX-License-Identifier: MIT
 *
 * Both write into a caller buffer snprintf-style: the full length is
 * returned, the text is cut (and NUL terminated) at the capacity.
 */
#include "schedule/schedule.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct wf_out {
    char *buf;
    size_t cap;
    size_t len;
} wf_out;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void out_printf(wf_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *dst = o->len < o->cap ? o->buf + o->len : NULL;
    size_t room = o->len < o->cap ? o->cap - o->len : 0;
    int n = vsnprintf(dst, room, fmt, ap);
    va_end(ap);
    if (n > 0) {
        o->len += (size_t)n;
    }
}

/* A string with JSON / DOT escapes (both escape " and \). */
static void out_escaped(wf_out *o, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            out_printf(o, "\\%c", ch);
        } else if (ch < 0x20) {
            out_printf(o, "\\u%04x", ch);
        } else {
            out_printf(o, "%c", ch);
        }
    }
}

static size_t out_end(wf_out *o)
{
    if (o->cap) {
        o->buf[o->len < o->cap ? o->len : o->cap - 1] = '\0';
    }
    return o->len;
}

size_t wf_schedule_trace(const weft_schedule *s, char *buf, size_t cap)
{
    wf_out o = {buf, buf ? cap : 0, 0}; /* no buffer: sizing only */
    out_printf(&o, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
    uint32_t workers = s->trace_workers ? s->trace_workers : 1;
    for (uint32_t k = 0; k < workers; k++) {
        out_printf(&o, "%s{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,"
                       "\"args\":{\"name\":\"worker %u%s\"}}",
                   k ? "," : "", k, k, k ? "" : " (caller)");
    }
    for (uint32_t k = 0; s->profiling && k < s->nnodes; k++) {
        const wf_system *sys = s->nodes[k].sys;
        if (!sys || !sys->ran) {
            continue;
        }
        out_printf(&o, ",{\"name\":\"");
        out_escaped(&o, sys->name);
        out_printf(&o, "\",\"cat\":\"system\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,"
                       "\"ts\":%.3f,\"dur\":%.3f}",
                   sys->worker, (double)sys->t_start / 1000.0,
                   (double)(sys->t_end - sys->t_start) / 1000.0);
    }
    out_printf(&o, "]}\n");
    return out_end(&o);
}

size_t wf_schedule_dot(const weft_schedule *s, char *buf, size_t cap)
{
    wf_out o = {buf, buf ? cap : 0, 0}; /* no buffer: sizing only */
    const wf_sgraph *g = &s->graph;
    const wf_plan *p = &s->plan;
    out_printf(&o, "digraph \"");
    out_escaped(&o, s->name);
    out_printf(&o, "\" {\n  rankdir=LR;\n  node [fontname=\"Helvetica\"];\n");
    for (uint32_t q = 0; q < p->n; q++) {
        const wf_step *st = &p->steps[q];
        out_printf(&o, "  n%u [label=\"", st->node);
        if (st->sys) {
            out_escaped(&o, st->sys->name);
            out_printf(&o, "\\n#%u\", shape=box%s];\n", q,
                       st->kind == WF_STEP_EXCLUSIVE ? ", style=bold, color=red"
                       : st->main_only              ? ", style=dashed"
                                                    : "");
        } else {
            const char *nm = st->node < s->nnodes ? s->nodes[st->node].name : "sync (auto)";
            out_escaped(&o, nm);
            out_printf(&o, "\\n#%u\", shape=diamond, color=blue];\n", q);
        }
    }
    for (uint32_t q = 0; q < p->n; q++) {
        for (uint32_t k = g->succ_off[q]; k < g->succ_off[q + 1]; k++) {
            out_printf(&o, "  n%u -> n%u;\n", p->steps[q].node, p->steps[g->succ[k]].node);
        }
    }
    for (uint32_t i = 0; i < s->nsets; i++) {
        out_printf(&o, "  s%u [label=\"", i);
        out_escaped(&o, s->sets[i].name);
        out_printf(&o, "%s\", shape=folder, style=dashed];\n",
                   s->sets[i].conds.n ? " (conditioned)" : "");
    }
    for (uint32_t i = 0; i < s->nmembers; i++) {
        weft_node child = s->members[i].a;
        uint32_t set = (s->members[i].b & ~WEFT_NODE_SET) - 1;
        if (child & WEFT_NODE_SET) {
            out_printf(&o, "  s%u -> s%u [style=dotted, arrowhead=none];\n", set,
                       (child & ~WEFT_NODE_SET) - 1);
        } else {
            out_printf(&o, "  s%u -> n%u [style=dotted, arrowhead=none];\n", set, child - 1);
        }
    }
    out_printf(&o, "}\n");
    return out_end(&o);
}
