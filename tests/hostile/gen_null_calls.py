#!/usr/bin/env python3
# tests/hostile/gen_null_calls.py - generates, from include/weft.h, one test
# case per pointer parameter of every public function: the call with that
# parameter NULL and every other argument valid (taken from the fixture in
# tests/hostile/test_null_args.c).
# SPDX-License-Identifier: MIT
#
# Usage: gen_null_calls.py <weft.h> <out.inc>
#
# CMake runs this at build time, so a function added to weft.h is covered
# by the next build without anyone writing its case. A parameter type the
# generator does not know how to make valid, or a NULL_OK entry that no
# longer matches a declaration, fails the build: a new API function cannot
# slip past uncovered.
#
# What each case expects (checked by nf_expect in test_null_args.c):
#   - a function reporting failure (status, NULL/0 handle, false) reports
#     it; when some other argument still names the world (world, schedule,
#     command buffer, iterator, system context), its error slot holds that
#     status and a message;
#   - functions returning a plain value (counts, ticks, sizes) and void
#     functions must only not crash;
#   - every case leaves weft_world_check clean.
# NULL_OK lists the parameters for which weft.h documents NULL as valid.
import re
import sys

# (function, parameter) -> why NULL is valid there (weft.h says so).
NULL_OK = {
    ("weft_world_create", "desc"): "NULL desc means all defaults",
    ("weft_world_destroy", "world"): "NULL is ignored",
    ("weft_last_error", "world"): "a NULL world gives a static message",
    ("weft_query_destroy", "query"): "NULL is ignored",
    ("weft_observer_destroy", "observer"): "NULL is ignored",
    ("weft_schedule_destroy", "schedule"): "NULL is ignored",
    ("weft_schedule_add_apply_point", "name"): "the name is optional",
    ("weft_commands_destroy", "cmds"): "NULL is ignored",
    ("weft_scene_destroy", "scene"): "NULL is ignored",
    ("weft_scene_spawn", "out"): "the new ids are optional",
    ("weft_snapshot_write", "buf"): "NULL buf asks for the size needed",
    ("weft_snapshot_delta_write", "buf"): "NULL buf asks for the size needed",
    ("weft_snapshot_merge", "buf"): "NULL buf asks for the size needed",
    ("weft_snapshot_write_ex", "options"): "NULL options: a full, uncompressed snapshot",
    ("weft_snapshot_write_ex", "buf"): "NULL buf asks for the size needed",
    ("weft_json_write_component", "buf"): "NULL buf asks for the size needed",
    ("weft_json_write_resource", "buf"): "NULL buf asks for the size needed",
    ("weft_json_write_entity", "buf"): "NULL buf asks for the size needed",
    ("weft_json_write_query", "buf"): "NULL buf asks for the size needed",
    ("weft_json_write_schema", "buf"): "NULL buf asks for the size needed",
    ("weft_iter_fini", "it"): "harmless on anything not iterating",
    ("weft_insert", "value"): "NULL value default-constructs",
    ("weft_cmd_insert", "value"): "NULL value default-constructs",
    ("weft_cmd_try_insert", "value"): "NULL value default-constructs",
    ("weft_resource_insert", "value"): "NULL value default-constructs",
    ("weft_cmd_resource_insert", "value"): "NULL value default-constructs",
    ("weft_cmd_custom", "drop"): "drop is optional",
    ("weft_iter_set_if_neq", "out_changed"): "out_changed may be NULL",
    ("weft_spawn_bulk", "out_entities"): "the ids are optional",
    ("weft_related_sources", "out_count"): "out_count may be NULL",
    ("weft_children", "out_count"): "out_count may be NULL",
    ("weft_world_set_job_system", "jobs"): "NULL goes back to the built-in pool",
    ("weft_world_share_threads", "lender"): "NULL stops borrowing",
    ("weft_system_fail", "message"): "NULL message uses the status text",
    ("weft_schedule_trace_json", "buf"): "NULL buf asks for the size needed",
    ("weft_schedule_dot", "buf"): "NULL buf asks for the size needed",
    ("weft_app_create", "desc"): "NULL desc means all defaults",
    ("weft_app_destroy", "app"): "NULL is ignored",
    ("weft_app_exit_requested", "out_code"): "the code is optional",
    ("weft_app_add_diagnostics_plugin", "desc"): "NULL desc means all defaults",
}

# Parameters never tested: user context pointers are the caller's own.
SKIP_NAMES = {"user"}

# Types that carry the world: when one of them is a valid argument, a
# failure must be recorded in the world's error slot with a message.
CARRIERS = {
    "weft_world *", "const weft_world *", "weft_schedule *", "const weft_schedule *",
    "weft_commands *", "const weft_commands *", "weft_iter *", "const weft_iter *",
    "weft_system_ctx *", "const weft_system_ctx *", "weft_app *", "const weft_app *",
}

# How to report failure, by return type.
HANDLE_RETURNS = {"weft_entity", "weft_component", "weft_node", "weft_event",
                  "weft_message_type", "weft_state"}


# Predicates whose answer on misuse is true (nothing to iterate).
TRUE_ON_FAILURE = {"weft_query_is_empty"}


def valid_value(fn, ptype, pname):
    """C expression for a valid argument of this type and name."""
    t = ptype
    if fn == "weft_children" and pname == "e":
        return "F->parent"  # the entity with a child
    if fn == "weft_snapshot_merge" and pname in ("base", "base_len", "delta", "delta_len"):
        # a real full snapshot and a delta on top of it, so that a NULL buf
        # reaches the size query
        return {"base": "F->snap", "base_len": "F->snap_len", "delta": "F->delta",
                "delta_len": "F->delta_len"}[pname]
    if t in ("weft_world *", "const weft_world *"):
        return "F->w"
    if t == "weft_entity":
        return {"parent": "F->parent", "child": "F->e", "target": "F->parent"}.get(pname,
                                                                               "F->e")
    if t == "weft_component":
        return {"rel": "F->rel", "r": "F->res"}.get(pname, "F->c")
    if t == "const void *":
        return "&F->val"
    if t == "size_t":
        return "sizeof F->buf" if pname == "cap" else "sizeof(int)"
    if t == "int32_t":
        return {"count": "1", "column_count": "1", "n": "1", "threads": "1",
                "min_rows": "1", "cap": "8", "index": "0", "term": "0", "row": "0",
                "query": "0", "i": "0"}.get(pname, "0")
    if t == "int64_t":
        return "8"
    if t == "uint64_t":
        return "0"
    if t == "uint32_t":
        return "F->tick" if "tick" in pname or pname.endswith("run") else "0"
    if t == "bool":
        return "false"
    if t == "double":
        return "0.016"
    if t == "weft_status":
        return "WEFT_ERR_INVALID_ARG"
    if t in ("weft_iter *", "const weft_iter *"):
        return "&F->it"
    if t in ("weft_commands *", "const weft_commands *"):
        return "F->cmds"
    if t in ("weft_query *", "const weft_query *"):
        return "F->q"
    if t in ("weft_schedule *", "const weft_schedule *"):
        return "F->s"
    if t == "weft_node":
        return "F->node"
    if t == "const weft_node *":
        return "&F->node"
    if t == "weft_condition *":
        return "F->cond"
    if t == "weft_observer *":
        return "F->obs"
    if t == "weft_event":
        return "F->event"
    if t == "weft_message_type":
        return "F->msg"
    if t == "weft_state":
        return "F->state"
    if t in ("weft_message_cursor *", "const weft_message_cursor *"):
        return "&F->cursor"
    if t in ("weft_system_ctx *", "const weft_system_ctx *"):
        return "ctx"
    if t == "const char *":
        return '"null-args.name"'
    if t == "char *":
        return "F->buf"
    if t == "const weft_value *":
        return "F->vals"
    if t == "const weft_entity *":
        return "&F->e"  # one handle (count arguments are 1)
    if t in ("const void **", "const void * *"):
        return "(const void **)(void *)F->scratch"
    if t == "const weft_require *":
        return "&F->req"
    if t == "weft_kind":
        return "WEFT_KIND_I32"
    if t == "const weft_scene *":
        return "F->scene"
    if t == "weft_command_fn":
        return "nf_command"
    if t == "weft_command_drop_fn":
        return "nf_drop"
    if t == "weft_chunk_fn":
        return "nf_chunk"
    if t == "void *":
        return "NULL"
    m = re.match(r"const (weft_\w+_desc|weft_snapshot_options) \*$", t)
    if m:
        return "&F->%s" % m.group(1)
    if t == "const weft_job_system *":
        return "&F->jobs"
    if t in ("weft_app *", "const weft_app *"):
        return "F->app"
    if t == "weft_plugin_fn":
        return "nf_plugin"
    if t == "weft_app_runner_fn":
        return "nf_runner"
    if t == "weft_app_place":
        return "WEFT_APP_AFTER"
    if t == "weft_step_behavior":
        return "WEFT_STEP_DEFAULT"
    if t == "weft_app_order":
        return "WEFT_APP_ORDER_MAIN"
    if t == "weft_task":
        return "WEFT_TASK_NONE"  # refused as INVALID_HANDLE when reached
    if t == "weft_task_pool":
        return "WEFT_TASK_POOL_IO"
    if t in ("weft_task_ctx *", "const weft_task_ctx *"):
        return "NULL"  # a context exists only inside a running task
    m = re.match(r"((?:weft_\w+)|int32_t|uint32_t|bool|size_t|double) \*$", t)
    if m:  # an out parameter: scratch space of that type
        return "(%s *)(void *)F->scratch" % m.group(1)
    return None


def parse(header):
    text = open(header, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    # drop preprocessor lines (with continuations)
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    decls = []
    for ret, name, params in re.findall(
            r"WEFT_API\s+([\w\s\*]*?)\b(weft_\w+)\s*\(([^;]*?)\)\s*;", text, flags=re.S):
        ret = " ".join(ret.split())
        ret = ret.replace(" *", " *").strip()
        plist = []
        params = " ".join(params.split())
        if params != "void":
            for p in params.split(","):
                p = p.strip()
                m = re.match(r"^(.*?)\s*(\w+)$", p)
                if not m:
                    sys.exit("gen_null_calls: cannot parse parameter '%s' of %s" % (p, name))
                ptype = " ".join(m.group(1).replace("*", " * ").split()).replace(" *", " *")
                plist.append((ptype, m.group(2)))
        decls.append((ret, name, plist))
    return decls


def is_pointer(ptype):
    return ptype.endswith("*") or ptype.endswith("_fn")


def ret_kind(ret):
    if ret == "weft_status":
        return "NF_RET_STATUS"
    if ret.endswith("*"):
        return "NF_RET_POINTER"
    if ret in HANDLE_RETURNS or ret == "bool":
        return "NF_RET_HANDLE"
    return "NF_RET_VALUE"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gen_null_calls.py <weft.h> <out.inc>")
    decls = parse(sys.argv[1])
    if len(decls) < 100:
        sys.exit("gen_null_calls: only %d declarations found in %s" % (len(decls), sys.argv[1]))
    seen = set()
    cases = []
    out = ["/* Generated by tests/hostile/gen_null_calls.py from include/weft.h.",
           " * Do not edit: rebuild instead. */", ""]
    for ret, name, plist in decls:
        for i, (ptype, pname) in enumerate(plist):
            if not is_pointer(ptype) or pname in SKIP_NAMES:
                continue
            seen.add((name, pname))
            args = []
            for j, (qtype, qname) in enumerate(plist):
                if j == i:
                    args.append("NULL")
                    continue
                v = valid_value(name, qtype, qname)
                if v is None:
                    sys.exit("gen_null_calls: no valid value for parameter '%s %s' of %s: "
                             "teach valid_value() about it" % (qtype, qname, name))
                args.append(v)
            in_system = any(q[0] in ("weft_system_ctx *", "const weft_system_ctx *")
                            for q in plist)
            # a NULL world leaves no slot to write to, whatever else is passed
            # (and an iterator passed to be started carries nothing yet)
            carrier = ptype not in ("weft_world *", "const weft_world *") and any(
                q[0] in CARRIERS and not (in_system and "weft_iter" in q[0])
                for j, q in enumerate(plist) if j != i)
            uses_iter = any(q[0] in ("weft_iter *", "const weft_iter *")
                            for j, q in enumerate(plist) if j != i)
            fid = "null_%s_%s" % (name, pname)
            kind = ret_kind(ret)
            call = "%s(%s)" % (name, ", ".join(args))
            out.append("static void %s(nf *F, weft_system_ctx *ctx)" % fid)
            out.append("{")
            out.append("    (void)ctx;")
            if uses_iter and not in_system:
                out.append("    nf_iter_begin(F);")
            if ret == "void":
                out.append("    %s;" % call)
                out.append("    nf_result r = {NF_RET_VOID, 0};")
            elif kind == "NF_RET_STATUS":
                out.append("    nf_result r = {%s, (uint64_t)%s};" % (kind, call))
            elif kind == "NF_RET_POINTER":
                out.append("    nf_result r = {%s, (uint64_t)(uintptr_t)%s};" % (kind, call))
            elif ret == "double":
                out.append("    nf_result r = {%s, (uint64_t)(%s != 0.0)};" % (kind, call))
            elif name in TRUE_ON_FAILURE:
                out.append("    nf_result r = {%s, (uint64_t)!%s};" % (kind, call))
            else:
                out.append("    nf_result r = {%s, (uint64_t)%s};" % (kind, call))
            if name == "weft_world_create":
                out.append("    weft_world_destroy((weft_world *)(uintptr_t)r.value);")
            if name == "weft_app_create":
                out.append("    weft_app_destroy((weft_app *)(uintptr_t)r.value);")
            # a writer with a NULL buffer (the one under test, or the valid
            # value of its buf) answers a size query: CAPACITY is not a failure
            size_query = any(qn == "buf" and (j == i or args[j] == "NULL")
                             for j, (qt, qn) in enumerate(plist)) and any(
                qn == "out_len" for (qt, qn) in plist)
            out.append("    nf_expect(F, r, \"%s\", \"%s\", %s, %s, %s);" % (
                name, pname, "true" if (name, pname) in NULL_OK else "false",
                "true" if carrier else "false", "true" if size_query else "false"))
            if uses_iter and not in_system:
                out.append("    nf_iter_end(F);")
            out.append("}")
            out.append("")
            cases.append((fid, name, pname, in_system))
    stale = set(NULL_OK) - seen
    if stale:
        sys.exit("gen_null_calls: NULL_OK names parameters weft.h no longer has: %s"
                 % sorted(stale))
    out.append("static const nf_case nf_cases[] = {")
    for fid, name, pname, in_system in cases:
        out.append("    {\"%s\", \"%s\", %s, %s}," % (name, pname, fid,
                                                   "true" if in_system else "false"))
    out.append("};")
    out.append("#define NF_FUNCTIONS %d" % len(decls))
    out.append("")
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    main()
