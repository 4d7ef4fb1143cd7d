/* src/module/module.c - loading, reloading and unloading modules (see
 * module.h).
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include "module/migrate.h"
#include "core/guard.h"
#include "module/module.h"
#include "query/query.h"
#include "storage/sparse_set.h"
#include "world/lifecycle.h"
#include "world/messages.h"
#include "world/resource.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define MOD_ALIGN _Alignof(void *)

#if UINTPTR_MAX > 0xffffffffu
typedef Elf64_Ehdr mod_ehdr;
typedef Elf64_Phdr mod_phdr;
#  define MOD_ELFCLASS ELFCLASS64
#else
typedef Elf32_Ehdr mod_ehdr;
typedef Elf32_Phdr mod_phdr;
#  define MOD_ELFCLASS ELFCLASS32
#endif

static const char MSG_NAME[] = "weft.ModuleReloaded";
static const char RES_NAME[] = "weft.ModuleReloads";

weft_status wf_module_safe_point(weft_app *a, const char *fn)
{
    weft_world *w = a->world;
    if (a->updating || a->in_callback) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE, "%s: called during an update or a plugin "
                        "callback; modules change only between frames", fn);
    }
    if ((w->sys && w->sys->depth > 0) || w->iter_depth > 0) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE, "%s: called while a schedule, hook or observer "
                        "runs; modules change only between frames", fn);
    }
    return WEFT_OK;
}

/* ---- loading one copy ---- */

/* Copies `path` to a new unique temporary file; its name goes to `tmp`. */
static weft_status copy_to_temp(weft_world *w, const char *path, char *tmp, size_t cap,
                                const char *fn)
{
    /* non-blocking: opening a FIFO must not wait for a writer; the type
     * is checked on the open descriptor (no race with a rename) */
    int in = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (in < 0) {
        int err = errno;
        bool missing = err == ENOENT || err == ENOTDIR || err == ELOOP || err == ENAMETOOLONG;
        return wf_error(w, missing ? WEFT_ERR_NOT_FOUND : WEFT_ERR_BAD_FORMAT,
                        "%s: cannot open '%s': %s", fn, path, strerror(err));
    }
    struct stat sb;
    if (fstat(in, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(in);
        return wf_error(w, WEFT_ERR_BAD_FORMAT,
                        "%s: '%s' is not a regular file (a directory, FIFO, device or "
                        "socket cannot be a module)",
                        fn, path);
    }
    if ((uint64_t)sb.st_size > WF_MODULE_MAX_BYTES) {
        close(in);
        return wf_error(w, WEFT_ERR_BAD_FORMAT,
                        "%s: '%s' is %lld bytes, above the %llu a module may have", fn, path,
                        (long long)sb.st_size, (unsigned long long)WF_MODULE_MAX_BYTES);
    }
    uint64_t copied = 0;
    const char *dir = getenv("TMPDIR");
    if (!dir || !dir[0]) {
        dir = "/tmp";
    }
    int len = snprintf(tmp, cap, "%s/weft-module-XXXXXX", dir);
    if (len < 0 || (size_t)len >= cap) {
        close(in);
        return wf_error(w, WEFT_ERR_INVALID_ARG, "%s: TMPDIR '%s' is too long", fn, dir);
    }
    int out = mkstemp(tmp);
    if (out < 0) {
        close(in);
        return wf_error(w, WEFT_ERR_INVALID_ARG, "%s: cannot create a temporary copy in '%s': "
                        "%s", fn, dir, strerror(errno));
    }
    char buf[16384];
    weft_status st = WEFT_OK;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n == 0) {
            break;
        }
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            st = wf_error(w, WEFT_ERR_INVALID_ARG, "%s: reading '%s': %s", fn, path,
                          strerror(errno));
            break;
        }
        copied += (uint64_t)n;
        if (copied > WF_MODULE_MAX_BYTES) { /* it grew while being copied */
            st = wf_error(w, WEFT_ERR_BAD_FORMAT, "%s: '%s' grew past the %llu a module may "
                          "have while being copied", fn, path,
                          (unsigned long long)WF_MODULE_MAX_BYTES);
            break;
        }
        for (ssize_t off = 0; off < n && st == WEFT_OK;) {
            ssize_t k = write(out, buf + off, (size_t)(n - off));
            if (k < 0 && errno == EINTR) {
                continue;
            }
            if (k <= 0) {
                st = wf_error(w, WEFT_ERR_INVALID_ARG, "%s: writing the copy of '%s': %s", fn,
                              path, strerror(errno));
            }
            off += k > 0 ? k : 0;
        }
        if (st != WEFT_OK) {
            break;
        }
    }
    close(in);
    if (close(out) != 0 && st == WEFT_OK) {
        st = wf_error(w, WEFT_ERR_INVALID_ARG, "%s: writing the copy of '%s': %s", fn, path,
                      strerror(errno));
    }
    if (st != WEFT_OK) {
        unlink(tmp);
    }
    return st;
}

/* Refuses a file the loader would map past its end (a build still being
 * written, a truncated copy): every loadable segment and the program
 * headers must lie inside the file. Mapping a short file and touching a
 * page beyond its end raises SIGBUS instead of an error, so this runs
 * before dlopen. Files that are no ELF at all are left to dlopen's own
 * error. */
static weft_status check_complete(weft_world *w, const char *tmp, const char *path,
                                  const char *fn)
{
    int fd = open(tmp, O_RDONLY);
    if (fd < 0) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "%s: cannot reopen the copy of '%s': %s", fn,
                        path, strerror(errno));
    }
    off_t size = lseek(fd, 0, SEEK_END);
    mod_ehdr eh;
    weft_status st = WEFT_OK;
    if (size < (off_t)sizeof eh || pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
        close(fd);
        return WEFT_OK; /* no ELF: dlopen reports it */
    }
    uint64_t usize = (uint64_t)size;
    if (eh.e_ident[EI_CLASS] != MOD_ELFCLASS ||
        eh.e_phentsize != sizeof(mod_phdr) ||
        (uint64_t)eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(mod_phdr) > usize ||
        (uint64_t)eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize > usize) {
        st = WEFT_ERR_BAD_FORMAT;
    }
    for (uint32_t i = 0; st == WEFT_OK && i < eh.e_phnum; i++) {
        mod_phdr ph;
        if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) !=
                (ssize_t)sizeof ph ||
            (uint64_t)ph.p_offset + (uint64_t)ph.p_filesz > usize) {
            st = WEFT_ERR_BAD_FORMAT;
        }
    }
    close(fd);
    if (st != WEFT_OK) {
        return wf_error(w, st, "%s: '%s' is not a loadable shared library: the file ends "
                        "before its segments (%lld bytes; truncated or still being written)",
                        fn, path, (long long)size);
    }
    return WEFT_OK;
}

/* Loads a fresh copy of `path` and checks its entry point. The copy's file
 * is unlinked at once (the mapping stays), so nothing is left behind. */
static weft_status load_copy(weft_world *w, const char *path, void **out_handle,
                             const weft_module_def **out_def, const char *fn)
{
    char tmp[4096];
    weft_status st = copy_to_temp(w, path, tmp, sizeof tmp, fn);
    if (st != WEFT_OK) {
        return st;
    }
    st = check_complete(w, tmp, path, fn);
    if (st != WEFT_OK) {
        unlink(tmp);
        return st;
    }
    void *h = dlopen(tmp, RTLD_NOW | RTLD_LOCAL);
    unlink(tmp);
    if (!h) {
        const char *e = dlerror();
        return wf_error(w, WEFT_ERR_BAD_FORMAT, "%s: '%s' is not a loadable shared library: %s",
                        fn, path, e ? e : "unknown loader error");
    }
    void *sym = dlsym(h, WEFT_MODULE_ENTRY_NAME);
    if (!sym) {
        dlclose(h);
        return wf_error(w, WEFT_ERR_BAD_FORMAT, "%s: '%s' exports no %s function", fn, path,
                        WEFT_MODULE_ENTRY_NAME);
    }
    weft_module_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry); /* object to function pointer (POSIX) */
    const weft_module_def *def;
    WF_CALLBACK(w, def = entry());
    if (!def) {
        dlclose(h);
        return wf_error(w, WEFT_ERR_BAD_FORMAT, "%s: %s of '%s' returned NULL", fn,
                        WEFT_MODULE_ENTRY_NAME, path);
    }
    if (def->abi_version != WEFT_MODULE_ABI_VERSION) {
        uint32_t v = def->abi_version;
        dlclose(h);
        return wf_error(w, WEFT_ERR_UNSUPPORTED, "%s: '%s' was built for module ABI version "
                        "%u, this weft loads version %u", fn, path, v,
                        WEFT_MODULE_ABI_VERSION);
    }
    if (!def->build) {
        dlclose(h);
        return wf_error(w, WEFT_ERR_BAD_FORMAT, "%s: the module def of '%s' has no build", fn,
                        path);
    }
    *out_handle = h;
    *out_def = def;
    return WEFT_OK;
}

/* ---- the staged build ---- */

typedef struct mod_rebind {
    wf_system *sys;
    weft_system_fn fn;
    void *user;
    void (*init)(void *local, void *user);
    void (*fini)(void *local, void *user);
    wf_system *decl;           /* the new declaration when it differs (its
                                  queries compiled), else NULL */
} mod_rebind;

/* A schedule's declaration counts before a build: pairs are only ever
 * appended, so truncating to them undoes what a failed build declared. */
typedef struct mod_mark {
    weft_schedule *sched;
    uint32_t nmembers, nedges, namb_ok;
    uint32_t nnodes, nsets;
    uint32_t *conds;           /* [nnodes + nsets] conditions of each node
                                  and set (lists only grow in a build) */
} mod_mark;

/* A user condition of the module the build created again. */
typedef struct mod_cond_rebind {
    weft_condition *c;
    weft_condition_fn fn;
    void *user;
    wf_system *decl;           /* the new declaration when it differs */
} mod_cond_rebind;

/* An observer of the module the build created again: its new code. */
typedef struct mod_obs_rebind {
    weft_observer *o;
    weft_observer_fn fn;
    void *user;
    void (*free_user)(void *user);
} mod_obs_rebind;

/* A component the module registered before, registered again by the
 * build: its new declaration, applied by the commit. */
enum { MOD_KEEP = 0, MOD_DESCRIBE = 1, MOD_MIGRATE = 2 };

typedef struct mod_redecl {
    weft_component id;
    bool adopt;                /* an unloaded module's: this one takes it */
    uint32_t size, align;
    weft_lifecycle_hooks lifecycle;
    wf_rdesc *rd;              /* the new description (owned until installed) */
    uint8_t *defaults;         /* [size] from the new description, or NULL */
    wf_mig_plan plan;          /* MOD_MIGRATE */
    uint8_t action;
} mod_redecl;

typedef struct mod_stage {
    mod_mark *marks;
    uint32_t nmarks;
    uint32_t nsched;           /* schedules marked (nmarks may be 1 for 0) */
    mod_redecl *redecls;
    uint32_t nredecls, cap_redecls;
    uint32_t reg0, reg1;       /* component count before and after the build */
    wf_app_label *labels0;     /* the app's labels before the build */
    uint32_t nlabels0, cap_labels0, seq0;
    bool build_failed;         /* the failure is the build's own */
    bool ran;                  /* the build ran (every mark was taken) */
    mod_obs_rebind *obs_rebinds;
    uint32_t nobs_rebinds, cap_obs_rebinds;
    mod_cond_rebind *cond_rebinds;
    uint32_t ncond_rebinds, cap_cond_rebinds;
    weft_condition **conds_added;
    uint32_t nconds_added, cap_conds_added;
    weft_condition **made;     /* built-in conditions and combinators made */
    uint32_t nmade, cap_made;
    weft_message_type *msgs;   /* message types the build registered anew */
    uint32_t nmsgs, cap_msgs;
    weft_message_type *adopted; /* unloaded modules' types it registered */
    uint32_t nadopted, cap_adopted;
    weft_observer **obs_added;
    uint32_t nobs_added, cap_obs_added;
    weft_module *m;
    const char *fn;
    wf_mod_sys *added;
    uint32_t nadded, cap_added;
    mod_rebind *rebinds;
    uint32_t nrebinds, cap_rebinds;
    weft_status fail;          /* first failure seen by the hook */
} mod_stage;

static bool same_name(const wf_system *sys, const char *name)
{
    return sys->name && name && strcmp(sys->name, name) == 0;
}

static weft_node stage_fail(mod_stage *g, weft_status st)
{
    if (g->fail == WEFT_OK) {
        g->fail = st;
    }
    return 0;
}

static weft_node stage_add(void *ctx, weft_schedule *s, const weft_system_desc *desc)
{
    mod_stage *g = ctx;
    weft_module *m = g->m;
    weft_world *w = s->world;
    if (g->fail != WEFT_OK) {
        return 0;
    }
    if (!s->app_owned || s->world != m->app->world) {
        return stage_fail(g, wf_error(w, WEFT_ERR_UNSUPPORTED,
                                      "%s: module '%s' added system '%s' to schedule '%s', "
                                      "which is no label of the module's app", g->fn, m->name,
                                      desc->name ? desc->name : "", s->name));
    }
    for (uint32_t i = 0; i < g->nadded; i++) {
        if (g->added[i].sched == s && same_name(g->added[i].sys, desc->name)) {
            goto dup;
        }
    }
    for (uint32_t i = 0; i < g->nrebinds; i++) {
        if (g->rebinds[i].sys->sched == s && same_name(g->rebinds[i].sys, desc->name)) {
            goto dup;
        }
    }
    for (uint32_t i = 0; i < m->nsystems; i++) {
        wf_system *sys = m->systems[i].sys;
        if (m->systems[i].sched != s || !same_name(sys, desc->name)) {
            continue;
        }
        if (sys->local_desc.size != desc->local.size ||
            sys->local_desc.align != desc->local.align) {
            return stage_fail(g, wf_error(w, WEFT_ERR_INVALID_ARG,
                                          "%s: module '%s': the local state of system '%s' "
                                          "changed from %zu to %zu bytes (align %zu to %zu); "
                                          "it cannot be kept across a reload", g->fn, m->name,
                                          desc->name, sys->local_desc.size, desc->local.size,
                                          sys->local_desc.align, desc->local.align));
        }
        if (!wf_grow(&w->alloc, (void **)&g->rebinds, &g->cap_rebinds,
                     (uint64_t)g->nrebinds + 1, sizeof *g->rebinds, MOD_ALIGN)) {
            return stage_fail(g, wf_error(w, WEFT_ERR_OUT_OF_MEMORY,
                                          "%s: out of memory", g->fn));
        }
        /* the new declaration, compiled (and so checked) now; kept only
         * when it differs from the running one (no local: it is kept) */
        weft_system_desc nd = *desc;
        memset(&nd.local, 0, sizeof nd.local);
        wf_system *decl = wf_system_create(w, s, &nd, NULL);
        if (!decl) {
            return stage_fail(g, wf_error_last(w));
        }
        if (wf_system_same_decl(sys, decl)) {
            wf_system_destroy(w, decl);
            decl = NULL;
        }
        mod_rebind *r = &g->rebinds[g->nrebinds++];
        r->sys = sys;
        r->fn = desc->fn;
        r->user = desc->user;
        r->init = desc->local.init;
        r->fini = desc->local.fini;
        r->decl = decl;
        return sys->node;
    }
    if (!wf_grow(&w->alloc, (void **)&g->added, &g->cap_added, (uint64_t)g->nadded + 1,
                 sizeof *g->added, MOD_ALIGN)) {
        return stage_fail(g, wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn));
    }
    weft_node n = wf_schedule_add_system_now(s, desc);
    if (!n) {
        return stage_fail(g, wf_error_last(w));
    }
    g->added[g->nadded].sched = s;
    g->added[g->nadded].sys = s->nodes[n - 1].sys;
    g->nadded++;
    return n;
dup:
    return stage_fail(g, wf_error(w, WEFT_ERR_ALREADY_EXISTS,
                                  "%s: module '%s' adds system '%s' to schedule '%s' twice",
                                  g->fn, m->name, desc->name, s->name));
}

static void remove_sys(weft_schedule *s, wf_system *sys)
{
    wf_schedule_remove_system(s, sys->node);
}

static void stage_free(weft_world *w, mod_stage *g)
{
    for (uint32_t i = 0; i < g->nredecls; i++) {
        mod_redecl *r = &g->redecls[i];
        wf_rdesc_free(w, r->rd);
        if (r->defaults) {
            wf_free(&w->alloc, r->defaults, r->size ? r->size : 1, 1);
        }
        wf_mig_free(w, &r->plan);
    }
    if (g->redecls) {
        wf_free(&w->alloc, g->redecls, g->cap_redecls * sizeof *g->redecls, MOD_ALIGN);
    }
    if (g->labels0) {
        wf_free(&w->alloc, g->labels0, g->cap_labels0 * sizeof *g->labels0, MOD_ALIGN);
    }
    if (g->obs_rebinds) {
        wf_free(&w->alloc, g->obs_rebinds, g->cap_obs_rebinds * sizeof *g->obs_rebinds,
                MOD_ALIGN);
    }
    if (g->obs_added) {
        wf_free(&w->alloc, g->obs_added, g->cap_obs_added * sizeof *g->obs_added, MOD_ALIGN);
    }
    for (uint32_t i = 0; i < g->ncond_rebinds; i++) {
        wf_system_destroy(w, g->cond_rebinds[i].decl);
    }
    if (g->cond_rebinds) {
        wf_free(&w->alloc, g->cond_rebinds, g->cap_cond_rebinds * sizeof *g->cond_rebinds,
                MOD_ALIGN);
    }
    if (g->conds_added) {
        wf_free(&w->alloc, g->conds_added, g->cap_conds_added * sizeof *g->conds_added,
                MOD_ALIGN);
    }
    if (g->made) {
        wf_free(&w->alloc, g->made, g->cap_made * sizeof *g->made, MOD_ALIGN);
    }
    if (g->msgs) {
        wf_free(&w->alloc, g->msgs, g->cap_msgs * sizeof *g->msgs, MOD_ALIGN);
    }
    if (g->adopted) {
        wf_free(&w->alloc, g->adopted, g->cap_adopted * sizeof *g->adopted, MOD_ALIGN);
    }
    for (uint32_t i = 0; g->marks && i < g->nsched; i++) {
        mod_mark *k = &g->marks[i];
        if (k->conds) {
            wf_free(&w->alloc, k->conds, (k->nnodes + k->nsets) * sizeof *k->conds, MOD_ALIGN);
        }
    }
    if (g->marks) {
        wf_free(&w->alloc, g->marks, g->nmarks * sizeof *g->marks, MOD_ALIGN);
    }
    if (g->added) {
        wf_free(&w->alloc, g->added, g->cap_added * sizeof *g->added, MOD_ALIGN);
    }
    for (uint32_t i = 0; i < g->nrebinds; i++) {
        wf_system_destroy(w, g->rebinds[i].decl);
    }
    if (g->rebinds) {
        wf_free(&w->alloc, g->rebinds, g->cap_rebinds * sizeof *g->rebinds, MOD_ALIGN);
    }
}

/* Is component id still referenced by something a failed build may have
 * left (a query, another component's requirement)? Then it stays. */
static bool comp_referenced(const weft_world *w, weft_component id)
{
    for (const weft_query *q = w->queries; q; q = q->next) {
        for (uint32_t t = 0; t < q->term_count; t++) {
            if (q->terms[t].id == id) {
                return true;
            }
        }
    }
    for (uint32_t c = 1; c <= w->registry.count; c++) {
        const wf_type_info *ti = w->registry.infos[c];
        for (uint32_t k = 0; k < ti->req_count; k++) {
            if (ti->reqs[k].id == id) {
                return true;
            }
        }
    }
    return false;
}

/* Unregisters the components registered since `reg0`, newest first, as
 * long as nothing uses them: no archetype holds one (archetypes are never
 * deleted), no query or requirement names one. */
static void pop_components(weft_world *w, uint32_t reg0)
{
    while (w->registry.count > reg0) {
        weft_component id = w->registry.count;
        wf_type_info *ti = w->registry.infos[id];
        if (ti->arch_count || ti->req_count || ti->removed_stream || ti->rel_targets ||
            ti->rel_source || comp_referenced(w, id)) {
            return;
        }
        wf_resource_remove(w, ti);
        wf_sparse_destroy(ti->sparse, &w->alloc);
        ti->sparse = NULL;
        if (w->reflect && id < w->reflect->comp_cap && w->reflect->comps[id]) {
            wf_rdesc_free(w, w->reflect->comps[id]);
            w->reflect->comps[id] = NULL;
        }
        if (ti->archs) {
            wf_free(&w->alloc, ti->archs, ti->arch_cap * sizeof *ti->archs, _Alignof(uint32_t));
            ti->archs = NULL;
        }
        wf_registry_pop(&w->registry, &w->alloc);
    }
}

/* Takes condition c off every node and set of its schedule. */
static void cond_unlist(weft_condition *c)
{
    weft_schedule *s = c->sched;
    for (uint32_t n = 0; n < s->nnodes + s->nsets; n++) {
        wf_conds *l = n < s->nnodes ? &s->nodes[n].conds : &s->sets[n - s->nnodes].conds;
        for (uint32_t k = 0; k < l->n;) {
            if (l->v[k] == c) {
                memmove(&l->v[k], &l->v[k + 1], (l->n - k - 1) * sizeof *l->v);
                l->n--;
                s->dirty = true;
            } else {
                k++;
            }
        }
    }
    c->attached = false;
}

/* Retires the built-in conditions and combinators a build made: off every
 * node and set. They stay in their schedule's list, which owns them, and
 * still evaluate (weft's own code) should something hold one. */
static void retire_made(weft_condition **made, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        weft_condition *c = made[i];
        cond_unlist(c);
        c->retired = true;
    }
}

/* The module's named user conditions that are operands of the
 * combinators its last build made: `attached` set to `taken`. A condition
 * has one user (a node, a set or a combinator), so a build combining one
 * again finds it free: the build releases them before it runs, a failed
 * build gives them back to the old combinators, and a committed one
 * retires those combinators and leaves them to the new build (taken or
 * free). */
static void made_operands(const weft_module *m, bool taken)
{
    for (uint32_t i = 0; i < m->nmade; i++) {
        weft_condition *ops[2] = {m->made[i]->a, m->made[i]->b};
        for (int k = 0; k < 2; k++) {
            if (ops[k] && ops[k]->kind == WF_COND_USER) {
                ops[k]->attached = taken;
            }
        }
    }
}

/* Is c one of the conditions the module's last build made? */
static bool made_by(const weft_module *m, const weft_condition *c)
{
    for (uint32_t i = 0; i < m->nmade; i++) {
        if (m->made[i] == c) {
            return true;
        }
    }
    return false;
}

/* Unregisters the message types the failed build registered, newest
 * first, as long as the newest type is one of them (a type registered
 * after the build by something else stays, and so do those below it). */
static void pop_messages(weft_world *w, mod_stage *g)
{
    while (g->nmsgs > 0 && w->messages &&
           w->messages->type_count == g->msgs[g->nmsgs - 1]) {
        wf_messages_pop(w);
        g->nmsgs--;
    }
}

/* Runs def's build with the add hook set and records what the build did
 * besides systems (components, labels). Undo with stage_undo. */
static weft_status stage_build(weft_app *a, mod_stage *g, const weft_module_def *def)
{
    weft_world *w = a->world;
    wf_sys_world *sw = wf_sys_get(w);
    if (!sw) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn);
    }
    uint32_t ns = 0;
    for (weft_schedule *s = sw->schedules; s; s = s->next) {
        ns++;
    }
    g->marks = wf_calloc(&w->alloc, (ns ? ns : 1) * sizeof *g->marks, MOD_ALIGN);
    g->nmarks = g->marks ? (ns ? ns : 1) : 0;
    g->labels0 = wf_alloc(&w->alloc, (a->nlabels ? a->nlabels : 1) * sizeof *g->labels0,
                          MOD_ALIGN);
    g->cap_labels0 = g->labels0 ? (a->nlabels ? a->nlabels : 1) : 0;
    if (!g->marks || !g->labels0) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn);
    }
    g->nsched = ns;
    uint32_t k = 0;
    for (weft_schedule *s = sw->schedules; s; s = s->next, k++) {
        mod_mark *mk = &g->marks[k];
        memset(mk, 0, sizeof *mk);
        mk->sched = s;
        mk->nmembers = s->nmembers;
        mk->nedges = s->nedges;
        mk->namb_ok = s->namb_ok;
        if (s->nnodes + s->nsets > 0) {
            mk->conds = wf_alloc(&w->alloc, (s->nnodes + s->nsets) * sizeof *mk->conds,
                                 MOD_ALIGN);
            if (!mk->conds) {
                g->nsched = k; /* the marks taken so far are freed */
                return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn);
            }
            mk->nnodes = s->nnodes;
            mk->nsets = s->nsets;
            for (uint32_t n = 0; n < s->nnodes; n++) {
                mk->conds[n] = s->nodes[n].conds.n;
            }
            for (uint32_t n = 0; n < s->nsets; n++) {
                mk->conds[s->nnodes + n] = s->sets[n].conds.n;
            }
        }
    }
    if (a->nlabels) {
        memcpy(g->labels0, a->labels, a->nlabels * sizeof *g->labels0);
    }
    g->nlabels0 = a->nlabels;
    g->seq0 = a->seq;
    g->reg0 = w->registry.count;
    made_operands(g->m, false);
    g->ran = true;
    sw->add_hook = stage_add;
    sw->add_hook_ctx = g;
    a->in_callback = true;
    w->module_build = true;
    w->module_stage = g;
    weft_status st;
    WF_CALLBACK(w, st = def->build(a, def->user));
    w->module_stage = NULL;
    w->module_build = false;
    a->in_callback = false;
    sw->add_hook = NULL;
    sw->add_hook_ctx = NULL;
    g->reg1 = w->registry.count;
    if (st == WEFT_OK && g->fail != WEFT_OK) {
        st = g->fail; /* the build went on after a refused system */
    }
    g->build_failed = st != WEFT_OK;
    return st;
}

static bool marked(const mod_stage *g, const weft_schedule *s)
{
    for (uint32_t i = 0; i < g->nsched; i++) {
        if (g->marks[i].sched == s) {
            return true;
        }
    }
    return false;
}

/* Undoes everything the build did (newest first): its orderings and set
 * memberships, its new systems, the schedules and labels it created or
 * moved, the components it registered. A failure of the build itself
 * gets a message naming the module; a later refusal keeps its own. */
static weft_status stage_undo(weft_app *a, mod_stage *g, weft_status st)
{
    weft_world *w = a->world;
    char why[WF_ERROR_LEN];
    snprintf(why, sizeof why, "%s", w->last_status != WEFT_OK ? w->last_error : "");
    if (!g->ran) {
        return st; /* refused before the build ran: nothing to undo */
    }
    for (uint32_t i = 0; i < g->nsched; i++) {
        weft_schedule *s = g->marks[i].sched;
        if (s->nmembers > g->marks[i].nmembers || s->nedges > g->marks[i].nedges ||
            s->namb_ok > g->marks[i].namb_ok) {
            s->nmembers = g->marks[i].nmembers;
            s->nedges = g->marks[i].nedges;
            s->namb_ok = g->marks[i].namb_ok;
            s->dirty = true;
        }
    }
    for (uint32_t i = 0; i < g->nsched; i++) {
        const mod_mark *mk = &g->marks[i];
        weft_schedule *s = mk->sched;
        for (uint32_t n = 0; n < mk->nnodes + mk->nsets; n++) {
            wf_conds *l = n < mk->nnodes ? &s->nodes[n].conds : &s->sets[n - mk->nnodes].conds;
            while (l->n > mk->conds[n]) {
                l->v[--l->n]->attached = false;
                s->dirty = true;
            }
        }
    }
    for (uint32_t i = 0; i < g->nconds_added; i++) {
        /* stays in its schedule's list, detached, with no code */
        g->conds_added[i]->attached = false;
        g->conds_added[i]->sys->cond_fn = NULL;
    }
    g->nconds_added = 0;
    retire_made(g->made, g->nmade);
    g->nmade = 0;
    made_operands(g->m, true);
    for (uint32_t i = g->nadded; i-- > 0;) {
        remove_sys(g->added[i].sched, g->added[i].sys);
    }
    g->nadded = 0;
    if (g->labels0) {
        wf_app_restore_labels(a, g->labels0, g->nlabels0, g->seq0);
    }
    wf_sys_world *sw = w->sys;
    for (weft_schedule **pp = sw ? &sw->schedules : NULL; pp && *pp;) {
        weft_schedule *s = *pp;
        if (g->marks && !marked(g, s)) {
            *pp = s->next; /* created by the build */
            wf_schedule_free(w, s);
        } else {
            pp = &s->next;
        }
    }
    for (uint32_t i = 0; i < g->nobs_added; i++) {
        wf_events_kill(&w->events, g->obs_added[i]);
    }
    g->nobs_added = 0;
    wf_events_sweep(&w->events, &w->alloc);
    pop_messages(w, g);
    pop_components(w, g->reg0);
    if (g->build_failed) {
        wf_error(w, st, "%s: the build of module '%s' failed (%s)%s%s; nothing changed", g->fn,
                 g->m->name, wf_status_name(st), why[0] ? ": " : "", why);
    } else {
        wf_error(w, st, "%s", why);
    }
    return st;
}

/* ---- components a build registers again ---- */

static bool module_owns(const weft_module *m, weft_component id)
{
    for (uint32_t i = 0; i < m->ncomps; i++) {
        if (m->comps[i] == id) {
            return true;
        }
    }
    return false;
}

static bool orphaned(const weft_app *a, weft_component id)
{
    const wf_modules *ms = a->modules;
    for (uint32_t i = 0; ms && i < ms->norphans; i++) {
        if (ms->orphans[i] == id) {
            return true;
        }
    }
    return false;
}

static mod_redecl *find_redecl(mod_stage *g, weft_component id)
{
    for (uint32_t i = 0; i < g->nredecls; i++) {
        if (g->redecls[i].id == id) {
            return &g->redecls[i];
        }
    }
    return NULL;
}

bool wf_module_redeclare(weft_world *w, const weft_component_desc *desc, uint32_t size,
                         uint32_t align, weft_storage storage, weft_component *out)
{
    mod_stage *g = w->module_stage;
    weft_component id = g ? wf_registry_lookup(&w->registry, desc->name) : 0;
    bool adopt = id && !module_owns(g->m, id) && orphaned(g->m->app, id);
    if (!id || (!adopt && !module_owns(g->m, id))) {
        return false;
    }
    const wf_type_info *ti = wf_registry_get(&w->registry, id);
    weft_module *m = g->m;
    *out = 0;
    if (find_redecl(g, id)) {
        stage_fail(g, wf_error(w, WEFT_ERR_ALREADY_EXISTS, "%s: module '%s' registers "
                               "component '%s' twice", g->fn, m->name, ti->name));
        return true;
    }
    const char *what = NULL;
    if (storage != ti->storage) {
        what = "its storage";
    } else if (desc->flags != ti->flags) {
        what = "its flags";
    } else if ((size == 0) != (ti->size == 0)) {
        what = "between a tag and a value";
    }
    if (what) {
        stage_fail(g, wf_error(w, WEFT_ERR_UNSUPPORTED, "%s: module '%s' changes %s of "
                               "component '%s'; only its layout (through type descriptions) "
                               "and its hooks can change across a reload", g->fn, m->name,
                               what, ti->name));
        return true;
    }
    if (!wf_grow(&w->alloc, (void **)&g->redecls, &g->cap_redecls, (uint64_t)g->nredecls + 1,
                 sizeof *g->redecls, MOD_ALIGN)) {
        stage_fail(g, wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn));
        return true;
    }
    mod_redecl *r = &g->redecls[g->nredecls++];
    memset(r, 0, sizeof *r);
    r->id = id;
    r->adopt = adopt;
    r->size = size;
    r->align = align;
    r->lifecycle = desc->lifecycle;
    *out = id;
    return true;
}

bool wf_module_describe(weft_world *w, weft_component c, const weft_type_desc *desc,
                        weft_status *out)
{
    mod_stage *g = w->module_stage;
    mod_redecl *r = g ? find_redecl(g, c) : NULL;
    if (!r) {
        return false;
    }
    const wf_type_info *ti = wf_registry_get(&w->registry, c);
    if (r->rd) {
        *out = wf_error(w, WEFT_ERR_ALREADY_EXISTS, "%s: module '%s' describes component "
                        "'%s' twice", g->fn, g->m->name, ti->name);
        stage_fail(g, *out);
        return true;
    }
    weft_status st = WEFT_OK;
    wf_rdesc *d = wf_rdesc_compile(w, desc, r->size, r->align, ti->name, &st);
    if (!d) {
        stage_fail(g, st);
        *out = st;
        return true;
    }
    r->rd = d;
    *out = WEFT_OK;
    return true;
}

/* Drops from m->obs the observers the host destroyed meanwhile. */
static void prune_observers(weft_module *m)
{
    weft_world *w = m->app->world;
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nobs; i++) {
        bool alive = false;
        for (const weft_observer *o = w->events.all; o && !alive; o = o->next) {
            alive = o == m->obs[i] && !o->dead;
        }
        if (alive) {
            m->obs[n++] = m->obs[i];
        }
    }
    m->nobs = n;
}

static bool obs_rebound(const mod_stage *g, const weft_observer *o)
{
    for (uint32_t i = 0; i < g->nobs_rebinds; i++) {
        if (g->obs_rebinds[i].o == o) {
            return true;
        }
    }
    return false;
}

bool wf_module_observer(weft_world *w, const weft_observer_desc *desc, weft_observer **out)
{
    mod_stage *g = w->module_stage;
    if (!g) {
        return false;
    }
    weft_module *m = g->m;
    for (uint32_t i = 0; i < m->nobs; i++) {
        weft_observer *o = m->obs[i];
        bool lifecycle = desc->event >= WEFT_EVENT_ADD && desc->event <= WEFT_EVENT_DESPAWN;
        if (o->event != desc->event || o->component != (lifecycle ? desc->component : 0) ||
            obs_rebound(g, o)) {
            continue;
        }
        if (!wf_grow(&w->alloc, (void **)&g->obs_rebinds, &g->cap_obs_rebinds,
                     (uint64_t)g->nobs_rebinds + 1, sizeof *g->obs_rebinds, MOD_ALIGN)) {
            stage_fail(g, wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn));
            *out = NULL;
            return true;
        }
        mod_obs_rebind *r = &g->obs_rebinds[g->nobs_rebinds++];
        r->o = o;
        r->fn = desc->fn;
        r->user = desc->user;
        r->free_user = desc->free_user;
        *out = o;
        return true;
    }
    return false;
}

bool wf_module_observer_added(weft_world *w, weft_observer *o)
{
    mod_stage *g = w->module_stage;
    if (!g) {
        return true;
    }
    if (!wf_grow(&w->alloc, (void **)&g->obs_added, &g->cap_obs_added,
                 (uint64_t)g->nobs_added + 1, sizeof *g->obs_added, MOD_ALIGN)) {
        stage_fail(g, wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn));
        return false;
    }
    g->obs_added[g->nobs_added++] = o;
    return true;
}

static bool cond_rebound(const mod_stage *g, const weft_condition *c)
{
    for (uint32_t i = 0; i < g->ncond_rebinds; i++) {
        if (g->cond_rebinds[i].c == c) {
            return true;
        }
    }
    return false;
}

bool wf_module_condition(weft_world *w, weft_schedule *s, const weft_condition_desc *desc,
                         weft_condition **out)
{
    mod_stage *g = w->module_stage;
    if (!g) {
        return false;
    }
    weft_module *m = g->m;
    *out = NULL;
    if (!desc->name || !desc->name[0]) {
        stage_fail(g, wf_error(w, WEFT_ERR_UNSUPPORTED, "weft_condition_create: module '%s' "
                               "creates a user condition without a name; a reload rebinds "
                               "conditions by name, so name it", m->name));
        return true;
    }
    for (uint32_t i = 0; i < m->nconds; i++) {
        weft_condition *c = m->conds[i];
        if (c->sched != s || !c->sys->name || strcmp(c->sys->name, desc->name) != 0) {
            continue;
        }
        if (cond_rebound(g, c)) {
            break; /* twice in one build */
        }
        weft_condition_desc nd = *desc;
        wf_system *decl = wf_system_create(w, s, NULL, &nd);
        if (!decl) {
            stage_fail(g, wf_error_last(w));
            return true;
        }
        if (wf_system_same_decl(c->sys, decl)) {
            wf_system_destroy(w, decl);
            decl = NULL;
        }
        if (!wf_grow(&w->alloc, (void **)&g->cond_rebinds, &g->cap_cond_rebinds,
                     (uint64_t)g->ncond_rebinds + 1, sizeof *g->cond_rebinds, MOD_ALIGN)) {
            wf_system_destroy(w, decl);
            stage_fail(g, wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn));
            return true;
        }
        mod_cond_rebind *r = &g->cond_rebinds[g->ncond_rebinds++];
        r->c = c;
        r->fn = desc->fn;
        r->user = desc->user;
        r->decl = decl;
        *out = c;
        return true;
    }
    for (uint32_t i = 0; i < g->nconds_added; i++) {
        weft_condition *c = g->conds_added[i];
        if (c->sched == s && strcmp(c->sys->name, desc->name) == 0) {
            stage_fail(g, wf_error(w, WEFT_ERR_ALREADY_EXISTS, "%s: module '%s' creates the "
                                   "condition '%s' twice in schedule '%s'", g->fn, m->name,
                                   desc->name, s->name));
            return true;
        }
    }
    for (uint32_t i = 0; i < g->ncond_rebinds; i++) {
        weft_condition *c = g->cond_rebinds[i].c;
        if (c->sched == s && strcmp(c->sys->name, desc->name) == 0) {
            stage_fail(g, wf_error(w, WEFT_ERR_ALREADY_EXISTS, "%s: module '%s' creates the "
                                   "condition '%s' twice in schedule '%s'", g->fn, m->name,
                                   desc->name, s->name));
            return true;
        }
    }
    return false;
}

weft_status wf_module_message_again(weft_world *w, weft_message_type type, size_t size,
                                    size_t align, weft_message_type *out)
{
    mod_stage *g = w->module_stage;
    if (!g) {
        return WEFT_ERR_NOT_FOUND;
    }
    const weft_module *m = g->m;
    const wf_modules *ms = m->app->modules;
    bool own = false;
    bool orphan = false;
    for (uint32_t i = 0; i < m->nmsgs && !own; i++) {
        own = m->msgs[i] == type;
    }
    for (uint32_t i = 0; ms && !own && i < ms->nmsg_orphans && !orphan; i++) {
        orphan = ms->msg_orphans[i] == type;
    }
    for (uint32_t i = 0; i < g->nadopted; i++) {
        if (g->adopted[i] == type) {
            orphan = false; /* twice in one build */
        }
    }
    if (!own && !orphan) {
        return WEFT_ERR_NOT_FOUND;
    }
    const wf_msg_stream *s = wf_messages_type(w, type);
    if (s->size != size || s->align != align) {
        weft_status st = wf_error(w, WEFT_ERR_UNSUPPORTED,
                                  "%s: module '%s' registers message type '%s' with size %zu "
                                  "and alignment %zu, but its messages have size %zu and "
                                  "alignment %zu; a message type's layout cannot change",
                                  g->fn, m->name, s->name, size, align, s->size, s->align);
        stage_fail(g, st);
        return st;
    }
    if (orphan) {
        if (!wf_grow(&w->alloc, (void **)&g->adopted, &g->cap_adopted,
                     (uint64_t)g->nadopted + 1, sizeof *g->adopted, MOD_ALIGN)) {
            weft_status st = wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn);
            stage_fail(g, st);
            return st;
        }
        g->adopted[g->nadopted++] = type;
    }
    *out = type;
    return WEFT_OK;
}

bool wf_module_message_reserve(weft_world *w)
{
    mod_stage *g = w->module_stage;
    if (!g) {
        return true;
    }
    if (!wf_grow(&w->alloc, (void **)&g->msgs, &g->cap_msgs, (uint64_t)g->nmsgs + 1,
                 sizeof *g->msgs, MOD_ALIGN)) {
        stage_fail(g, wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn));
        return false;
    }
    return true;
}

void wf_module_message_added(weft_world *w, weft_message_type type)
{
    mod_stage *g = w->module_stage;
    if (g && g->nmsgs < g->cap_msgs) {
        g->msgs[g->nmsgs++] = type;
    }
}

/* Room for the module's message types after the commit. */
static bool reserve_msgs(weft_world *w, weft_module *m, const mod_stage *g)
{
    return wf_grow(&w->alloc, (void **)&m->msgs, &m->cap_msgs,
                   (uint64_t)m->nmsgs + g->nmsgs + g->nadopted + 1, sizeof *m->msgs,
                   MOD_ALIGN);
}

/* The build's new message types, and the unloaded modules' ones it
 * registered again, become the module's (room reserved). */
static void commit_msgs(weft_module *m, mod_stage *g)
{
    for (uint32_t i = 0; i < g->nmsgs; i++) {
        m->msgs[m->nmsgs++] = g->msgs[i];
    }
    g->nmsgs = 0;
    wf_modules *ms = m->app->modules;
    for (uint32_t i = 0; i < g->nadopted; i++) {
        m->msgs[m->nmsgs++] = g->adopted[i];
        for (uint32_t k = 0; k < ms->nmsg_orphans; k++) {
            if (ms->msg_orphans[k] == g->adopted[i]) {
                ms->msg_orphans[k] = ms->msg_orphans[--ms->nmsg_orphans];
                break;
            }
        }
    }
    g->nadopted = 0;
}

bool wf_module_condition_made(weft_world *w, weft_condition *c)
{
    mod_stage *g = w->module_stage;
    if (!g) {
        return true;
    }
    if (!wf_grow(&w->alloc, (void **)&g->made, &g->cap_made, (uint64_t)g->nmade + 1,
                 sizeof *g->made, MOD_ALIGN)) {
        stage_fail(g, wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn));
        return false;
    }
    g->made[g->nmade++] = c;
    return true;
}

bool wf_module_condition_added(weft_world *w, weft_condition *c)
{
    mod_stage *g = w->module_stage;
    if (!g) {
        return true;
    }
    if (!wf_grow(&w->alloc, (void **)&g->conds_added, &g->cap_conds_added,
                 (uint64_t)g->nconds_added + 1, sizeof *g->conds_added, MOD_ALIGN)) {
        stage_fail(g, wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn));
        return false;
    }
    g->conds_added[g->nconds_added++] = c;
    return true;
}

/* Is condition c an operand of a combinator of its schedule that stays
 * (not retired, not one of m's last build, which the commit retires)? */
static const weft_condition *cond_user_of(const weft_module *m, const weft_condition *c)
{
    for (const weft_condition *k = c->sched->conds; k; k = k->next) {
        if (!k->retired && (k->a == c || k->b == c) && !made_by(m, k)) {
            return k;
        }
    }
    return NULL;
}

/* Refuses a reload that drops a condition of the module still used by a
 * combinator (the combinator would run code about to be unloaded). */
static weft_status check_conditions(weft_world *w, const weft_module *m, const mod_stage *g)
{
    for (uint32_t i = 0; i < m->nconds; i++) {
        const weft_condition *c = m->conds[i];
        if (!cond_rebound(g, c) && cond_user_of(m, c)) {
            return wf_error(w, WEFT_ERR_UNSUPPORTED, "%s: module '%s' no longer creates the "
                            "condition '%s', which a combined condition still uses; nothing "
                            "changed", g->fn, m->name, c->sys->name);
        }
    }
    return WEFT_OK;
}

/* Takes user condition c off every node and set, with no code left. */
static void cond_detach(weft_condition *c)
{
    cond_unlist(c);
    c->sys->cond_fn = NULL;
}

static bool reserve_conds(weft_world *w, weft_module *m, const mod_stage *g)
{
    return wf_grow(&w->alloc, (void **)&m->conds, &m->cap_conds,
                   (uint64_t)m->nconds + g->nconds_added + 1, sizeof *m->conds, MOD_ALIGN);
}

/* Rebinds the conditions the build created again, detaches the others
 * (left in their schedule with no code), keeps the new ones. */
static void commit_conditions(weft_module *m, mod_stage *g)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nconds; i++) {
        weft_condition *c = m->conds[i];
        mod_cond_rebind *r = NULL;
        for (uint32_t k = 0; k < g->ncond_rebinds && !r; k++) {
            r = g->cond_rebinds[k].c == c ? &g->cond_rebinds[k] : NULL;
        }
        if (!r) {
            cond_detach(c);
            continue;
        }
        c->sys->cond_fn = r->fn;
        c->sys->user = r->user;
        if (r->decl) {
            wf_system_swap_decl(c->sys, r->decl);
            wf_system_destroy(c->sched->world, r->decl);
            r->decl = NULL;
            c->sched->dirty = true;
        }
        m->conds[n++] = c;
    }
    for (uint32_t i = 0; i < g->nconds_added; i++) {
        m->conds[n++] = g->conds_added[i];
    }
    m->nconds = n;
    g->nconds_added = 0;
    /* the new build's built-in conditions and combinators replace the
     * last one's (the arrays trade places, so nothing is allocated) */
    retire_made(m->made, m->nmade);
    weft_condition **old = m->made;
    uint32_t cap = m->cap_made;
    m->made = g->made;
    m->nmade = g->nmade;
    m->cap_made = g->cap_made;
    g->made = old;
    g->nmade = 0;
    g->cap_made = cap;
}

/* Room for the module's observers after the commit. */
static bool reserve_obs(weft_world *w, weft_module *m, const mod_stage *g)
{
    return wf_grow(&w->alloc, (void **)&m->obs, &m->cap_obs,
                   (uint64_t)m->nobs + g->nobs_added + 1, sizeof *m->obs, MOD_ALIGN);
}

/* Rebinds the observers the build created again, destroys the module's
 * others (their free_user runs with the old code, still loaded), keeps
 * the new ones. Cannot fail (room reserved). */
static void commit_observers(weft_world *w, weft_module *m, mod_stage *g)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nobs; i++) {
        weft_observer *o = m->obs[i];
        const mod_obs_rebind *r = NULL;
        for (uint32_t k = 0; k < g->nobs_rebinds && !r; k++) {
            r = g->obs_rebinds[k].o == o ? &g->obs_rebinds[k] : NULL;
        }
        if (!r) {
            wf_events_kill(&w->events, o);
            continue;
        }
        if (o->free_user && o->user != r->user) {
            WF_CALLBACK(w, o->free_user(o->user));
        }
        o->fn = r->fn;
        o->user = r->user;
        o->free_user = r->free_user;
        m->obs[n++] = o;
    }
    for (uint32_t i = 0; i < g->nobs_added; i++) {
        m->obs[n++] = g->obs_added[i];
    }
    m->nobs = n;
    g->nobs_added = 0;
    wf_events_sweep(&w->events, &w->alloc);
}

weft_status wf_module_defaults(weft_world *w, weft_component c, const void *value,
                               size_t size)
{
    static const char fn[] = "weft_component_migration_defaults";
    mod_stage *g = w->module_stage;
    mod_redecl *r = g ? find_redecl(g, c) : NULL;
    const wf_type_info *ti = wf_registry_get(&w->registry, c);
    if (!r && g && ti && c > g->reg0) {
        /* registered first by this build: nothing to migrate */
        if (size != ti->size) {
            return wf_error(w, WEFT_ERR_SIZE_MISMATCH, "%s: component '%s' has %u bytes, "
                            "the defaults have %zu", fn, ti->name, ti->size, size);
        }
        return WEFT_OK;
    }
    if (!r) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "%s: component id %u was not registered by "
                        "this build of the module", fn, c);
    }
    if (size != r->size) {
        return wf_error(w, WEFT_ERR_SIZE_MISMATCH, "%s: component '%s' is declared with %u "
                        "bytes, the defaults have %zu", fn, ti->name, r->size, size);
    }
    if (r->defaults) {
        return wf_error(w, WEFT_ERR_ALREADY_EXISTS, "%s: component '%s' has defaults already",
                        fn, ti->name);
    }
    r->defaults = wf_alloc(&w->alloc, r->size ? r->size : 1, 1);
    if (!r->defaults) {
        weft_status st = wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
        stage_fail(g, st);
        return st;
    }
    memcpy(r->defaults, value, r->size);
    return WEFT_OK;
}

/* Is component id required, with a default value, by another one? Such a
 * default has the old layout. */
static const char *required_with_value(const weft_world *w, weft_component id)
{
    for (uint32_t c = 1; c <= w->registry.count; c++) {
        const wf_type_info *ti = w->registry.infos[c];
        for (uint32_t k = 0; k < ti->req_count; k++) {
            if (ti->reqs[k].id == id && ti->reqs[k].value) {
                return ti->name;
            }
        }
    }
    return NULL;
}

/* Decides, for every component the build declared again, what the commit
 * does with it, and allocates all it needs: nothing changes here. */
static weft_status stage_layouts(weft_world *w, mod_stage *g)
{
    const char *fn = g->fn;
    for (uint32_t i = 0; i < g->nredecls; i++) {
        mod_redecl *r = &g->redecls[i];
        const wf_type_info *ti = wf_registry_get(&w->registry, r->id);
        const wf_rdesc *old = wf_reflect_component(w, r->id);
        bool same = r->size == ti->size && r->align == ti->align;
        if (!r->rd || !old) {
            if (!same) {
                return wf_error(w, WEFT_ERR_SIZE_MISMATCH,
                                "%s: module '%s' changes the layout of component '%s' (%u to "
                                "%u bytes, align %u to %u) without type descriptions of both "
                                "layouts (weft_component_describe in every build); nothing "
                                "changed", fn, g->m->name, ti->name, ti->size, r->size,
                                ti->align, r->align);
            }
            r->action = r->rd ? MOD_DESCRIBE : MOD_KEEP;
            if (r->rd && !wf_reflect_install(w, false, r->id, NULL)) {
                return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
            }
            continue;
        }
        const char *req = required_with_value(w, r->id);
        const char *no = ti->rel_targets || ti->rel_source ? "it is part of a relationship"
                         : !ti->trivial ? "it has type hooks"
                         : req ? "another component requires it with a default value"
                               : NULL;
        if (no) {
            return wf_error(w, WEFT_ERR_UNSUPPORTED, "%s: module '%s' changes the layout of "
                            "component '%s', which cannot be migrated: %s%s%s; nothing changed",
                            fn, g->m->name, ti->name, no, req ? ": " : "", req ? req : "");
        }
        r->action = MOD_MIGRATE;
        char who[160];
        snprintf(who, sizeof who, "%s: module '%s'", fn, g->m->name);
        weft_status st = wf_mig_plan_build(w, ti, old, r->rd, r->size, r->align, r->defaults,
                                           &r->plan, who);
        if (st == WEFT_OK) {
            st = wf_mig_prepare(w, &r->plan, who);
        }
        if (st != WEFT_OK) {
            return st;
        }
    }
    return WEFT_OK;
}

/* Sets a component's lifecycle hooks (the new code's, or none). */
static void set_lifecycle(weft_world *w, weft_component id, const weft_lifecycle_hooks *h)
{
    wf_type_info *ti = wf_registry_get(&w->registry, id);
    ti->lifecycle = *h;
    const void *fns[5] = {(const void *)(uintptr_t)h->on_add,
                          (const void *)(uintptr_t)h->on_insert,
                          (const void *)(uintptr_t)h->on_replace,
                          (const void *)(uintptr_t)h->on_remove,
                          (const void *)(uintptr_t)h->on_despawn};
    static const weft_event evs[5] = {WEFT_EVENT_ADD, WEFT_EVENT_INSERT, WEFT_EVENT_REPLACE,
                                      WEFT_EVENT_REMOVE, WEFT_EVENT_DESPAWN};
    for (int k = 0; k < 5; k++) {
        if (fns[k]) {
            wf_listen(w, id, wf_event_bit(evs[k]));
        }
    }
}

/* Applies the new declarations (cannot fail): migrates layouts, installs
 * descriptions, rebinds lifecycle hooks, drops the hooks of the module's
 * components the build did not declare again. */
static void commit_components(weft_world *w, weft_module *m, mod_stage *g)
{
    for (uint32_t i = 0; i < g->nredecls; i++) {
        mod_redecl *r = &g->redecls[i];
        if (r->action == MOD_MIGRATE) {
            wf_mig_commit(w, &r->plan);
        }
        if (r->action != MOD_KEEP) {
            wf_rdesc_free(w, w->reflect->comps[r->id]);
            w->reflect->comps[r->id] = r->rd;
            r->rd = NULL;
        }
        set_lifecycle(w, r->id, &r->lifecycle);
    }
    static const weft_lifecycle_hooks none;
    for (uint32_t i = 0; i < m->ncomps; i++) {
        if (!find_redecl(g, m->comps[i])) {
            set_lifecycle(w, m->comps[i], &none);
        }
    }
}

/* Room in m->comps for the components the build registered first. */
static bool reserve_comps(weft_world *w, weft_module *m, const mod_stage *g)
{
    return wf_grow(&w->alloc, (void **)&m->comps, &m->cap_comps,
                   (uint64_t)m->ncomps + (g->reg1 - g->reg0) + g->nredecls + 1,
                   sizeof *m->comps, MOD_ALIGN);
}

/* The components the build registered first, and the unloaded modules'
 * ones it registered again, become the module's. */
static void adopt_comps(weft_module *m, const mod_stage *g)
{
    for (weft_component id = g->reg0 + 1; id <= g->reg1; id++) {
        m->comps[m->ncomps++] = id;
    }
    wf_modules *ms = m->app->modules;
    for (uint32_t i = 0; i < g->nredecls; i++) {
        if (!g->redecls[i].adopt) {
            continue;
        }
        m->comps[m->ncomps++] = g->redecls[i].id;
        for (uint32_t k = 0; k < ms->norphans; k++) {
            if (ms->orphans[k] == g->redecls[i].id) {
                ms->orphans[k] = ms->orphans[--ms->norphans];
                break;
            }
        }
    }
}

/* ---- the app's module list and signals ---- */

static void modules_fini(weft_app *a);

static wf_modules *modules_get(weft_app *a)
{
    if (!a->modules) {
        wf_modules *ms = wf_calloc(&a->alloc, sizeof *ms, _Alignof(wf_modules));
        if (!ms) {
            return NULL;
        }
        a->modules = ms;
        a->modules_fini = modules_fini;
    }
    return a->modules;
}

weft_message_type wf_module_message(weft_app *a)
{
    weft_world *w = a->world;
    weft_message_type t = wf_messages_lookup(w, MSG_NAME);
    if (t) {
        const wf_msg_stream *s = wf_messages_type(w, t);
        if (s->size < sizeof(weft_module_reloaded)) {
            wf_error(w, WEFT_ERR_ALREADY_EXISTS, "message type '%s' exists with another size",
                     MSG_NAME);
            return 0;
        }
        return t;
    }
    t = wf_messages_register(w, MSG_NAME, sizeof(weft_module_reloaded),
                             _Alignof(weft_module_reloaded), NULL, NULL);
    if (!t) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory registering '%s'", MSG_NAME);
    }
    return t;
}

weft_component wf_module_resource(weft_app *a)
{
    weft_world *w = a->world;
    weft_component c = wf_registry_lookup(&w->registry, RES_NAME);
    if (c) {
        const wf_type_info *ti = wf_registry_get(&w->registry, c);
        if (ti->size != sizeof(weft_module_reloads)) {
            wf_error(w, WEFT_ERR_ALREADY_EXISTS, "component '%s' exists with another size",
                     RES_NAME);
            return 0;
        }
        return c;
    }
    weft_component_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.name = RES_NAME;
    cd.size = sizeof(weft_module_reloads);
    cd.align = _Alignof(weft_module_reloads);
    wf_type_info *ti = wf_registry_add(&w->registry, &w->alloc, &cd,
                                       (uint32_t)sizeof(weft_module_reloads),
                                       (uint32_t)_Alignof(weft_module_reloads),
                                       WEFT_STORAGE_TABLE);
    if (!ti) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory registering '%s'", RES_NAME);
        return 0;
    }
    return ti->id;
}

/* Applies the commands every schedule still holds (a run that skipped its
 * final apply), so no buffer of a system about to change is left. */
static void apply_pending(weft_world *w)
{
    for (weft_schedule *s = w->sys ? w->sys->schedules : NULL; s; s = s->next) {
        wf_schedule_apply_pending(w, s);
    }
}

static void watch_stop(weft_module *m);

static void module_free(weft_module *m)
{
    watch_stop(m);
    wf_allocator *al = &m->app->alloc;
    weft_world *w = m->app->world;
    if (m->systems) {
        wf_free(&w->alloc, m->systems, m->cap_systems * sizeof *m->systems, MOD_ALIGN);
    }
    if (m->comps) {
        wf_free(&w->alloc, m->comps, m->cap_comps * sizeof *m->comps, MOD_ALIGN);
    }
    if (m->obs) {
        wf_free(&w->alloc, m->obs, m->cap_obs * sizeof *m->obs, MOD_ALIGN);
    }
    if (m->conds) {
        wf_free(&w->alloc, m->conds, m->cap_conds * sizeof *m->conds, MOD_ALIGN);
    }
    if (m->made) {
        wf_free(&w->alloc, m->made, m->cap_made * sizeof *m->made, MOD_ALIGN);
    }
    if (m->msgs) {
        wf_free(&w->alloc, m->msgs, m->cap_msgs * sizeof *m->msgs, MOD_ALIGN);
    }
    wf_strfree(al, m->path);
    wf_strfree(al, m->name);
    m->magic = 0;
    wf_free(al, m, sizeof *m, _Alignof(weft_module));
}

/* Removes the module's systems, newest first, and unloads its code. */
static void module_drop(weft_module *m)
{
    weft_world *w = m->app->world;
    apply_pending(w);
    for (uint32_t i = m->nsystems; i-- > 0;) {
        remove_sys(m->systems[i].sched, m->systems[i].sys);
    }
    m->nsystems = 0;
    /* the components stay (their values too); hooks into the code go */
    static const weft_lifecycle_hooks none;
    for (uint32_t i = 0; i < m->ncomps; i++) {
        set_lifecycle(w, m->comps[i], &none);
    }
    for (uint32_t i = 0; i < m->nconds; i++) {
        cond_detach(m->conds[i]);
    }
    m->nconds = 0;
    retire_made(m->made, m->nmade);
    m->nmade = 0;
    prune_observers(m);
    for (uint32_t i = 0; i < m->nobs; i++) {
        wf_events_kill(&w->events, m->obs[i]);
    }
    m->nobs = 0;
    wf_events_sweep(&w->events, &w->alloc);
    if (m->handle) {
        dlclose(m->handle);
        m->handle = NULL;
    }
}

static void modules_fini(weft_app *a)
{
    wf_modules *ms = a->modules;
    for (uint32_t i = ms->n; i-- > 0;) {
        module_drop(ms->v[i]);
        module_free(ms->v[i]);
    }
    if (ms->v) {
        wf_free(&a->alloc, ms->v, ms->cap * sizeof *ms->v, MOD_ALIGN);
    }
    if (ms->orphans) {
        wf_free(&a->alloc, ms->orphans, ms->cap_orphans * sizeof *ms->orphans, MOD_ALIGN);
    }
    if (ms->msg_orphans) {
        wf_free(&a->alloc, ms->msg_orphans, ms->cap_msg_orphans * sizeof *ms->msg_orphans,
                MOD_ALIGN);
    }
    wf_free(&a->alloc, ms, sizeof *ms, _Alignof(wf_modules));
    a->modules = NULL;
    a->modules_fini = NULL;
}

/* ---- load, reload, unload ---- */

weft_module *wf_module_load(weft_app *a, const char *path)
{
    static const char fn[] = "weft_module_load";
    weft_world *w = a->world;
    if (wf_module_safe_point(a, fn) != WEFT_OK) {
        return NULL;
    }
    wf_modules *ms = modules_get(a);
    weft_module *m = ms ? wf_calloc(&a->alloc, sizeof *m, _Alignof(weft_module)) : NULL;
    if (m) {
        m->app = a;
        m->wd_fd = -1;
        m->path = wf_strdup(&a->alloc, path, NULL);
        m->name = wf_strdup(&a->alloc, path, NULL);
    }
    if (!m || !m->path || !m->name ||
        !wf_grow(&a->alloc, (void **)&ms->v, &ms->cap, (uint64_t)ms->n + 1, sizeof *ms->v,
                 MOD_ALIGN)) {
        if (m) {
            module_free(m);
        }
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
        return NULL;
    }
    apply_pending(w);
    void *h = NULL;
    const weft_module_def *def = NULL;
    if (load_copy(w, path, &h, &def, fn) != WEFT_OK) {
        module_free(m);
        return NULL;
    }
    if (def->name && def->name[0]) {
        char *nm = wf_strdup(&a->alloc, def->name, NULL);
        if (!nm) {
            dlclose(h);
            module_free(m);
            wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
            return NULL;
        }
        wf_strfree(&a->alloc, m->name);
        m->name = nm;
    }
    mod_stage g;
    memset(&g, 0, sizeof g);
    g.m = m;
    g.fn = fn;
    weft_status st = stage_build(a, &g, def);
    if (st == WEFT_OK) {
        st = stage_layouts(w, &g); /* an unloaded module's components */
    }
    if (st == WEFT_OK &&
        (!reserve_comps(w, m, &g) || !reserve_obs(w, m, &g) || !reserve_conds(w, m, &g) ||
         !reserve_msgs(w, m, &g))) {
        st = wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    if (st != WEFT_OK) {
        stage_undo(a, &g, st);
        stage_free(w, &g);
        dlclose(h);
        module_free(m);
        return NULL;
    }
    commit_components(w, m, &g);
    adopt_comps(m, &g);
    commit_observers(w, m, &g);
    commit_conditions(m, &g);
    commit_msgs(m, &g);
    /* a first build only adds: its systems become the module's */
    m->systems = g.added;
    m->nsystems = g.nadded;
    m->cap_systems = g.cap_added;
    g.added = NULL;
    stage_free(w, &g);
    m->handle = h;
    m->magic = WF_MODULE_MAGIC;
    ms->v[ms->n++] = m;
    return m;
}

static bool rebound(const mod_stage *g, const wf_system *sys)
{
    for (uint32_t i = 0; i < g->nrebinds; i++) {
        if (g->rebinds[i].sys == sys) {
            return true;
        }
    }
    return false;
}

weft_status wf_module_reload(weft_module *m)
{
    static const char fn[] = "weft_module_reload";
    weft_app *a = m->app;
    weft_world *w = a->world;
    wf_modules *ms = a->modules;
    weft_status st = wf_module_safe_point(a, fn);
    if (st != WEFT_OK) {
        return st;
    }
    apply_pending(w);
    prune_observers(m);
    void *h = NULL;
    const weft_module_def *def = NULL;
    st = load_copy(w, m->path, &h, &def, fn);
    if (st != WEFT_OK) {
        return st;
    }
    mod_stage g;
    memset(&g, 0, sizeof g);
    g.m = m;
    g.fn = fn;
    st = stage_build(a, &g, def);
    /* everything that can fail comes before the first change: the layouts'
     * plans and blocks, the new lists' room and the signals' registration */
    if (st == WEFT_OK) {
        st = stage_layouts(w, &g);
    }
    if (st == WEFT_OK) {
        st = check_conditions(w, m, &g);
    }
    if (st == WEFT_OK &&
        (!reserve_comps(w, m, &g) || !reserve_obs(w, m, &g) || !reserve_conds(w, m, &g) ||
         !reserve_msgs(w, m, &g))) {
        st = wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    uint32_t keep = g.nrebinds + g.nadded;
    wf_mod_sys *list = NULL;
    weft_message_type msg = 0;
    weft_component res = 0;
    if (st == WEFT_OK) {
        list = wf_alloc(&w->alloc, (keep ? keep : 1) * sizeof *list, MOD_ALIGN);
        msg = list ? wf_module_message(a) : 0;
        res = msg ? wf_module_resource(a) : 0;
        if (!list || !msg || !res) {
            st = list ? wf_error_last(w)
                      : wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
        }
    }
    if (st != WEFT_OK) {
        if (list) {
            wf_free(&w->alloc, list, (keep ? keep : 1) * sizeof *list, MOD_ALIGN);
        }
        stage_undo(a, &g, st);
        stage_free(w, &g);
        dlclose(h);
        return st;
    }
    commit_components(w, m, &g);
    adopt_comps(m, &g);
    commit_observers(w, m, &g);
    commit_conditions(m, &g);
    commit_msgs(m, &g);
    /* commit: vanished systems go (their fini runs with the old code, still
     * loaded), rebound ones get the new code, added ones join */
    weft_module_reloaded ev = {0, (int32_t)g.nrebinds, (int32_t)g.nadded, 0};
    uint32_t n = 0;
    for (uint32_t i = m->nsystems; i-- > 0;) {
        if (!rebound(&g, m->systems[i].sys)) {
            remove_sys(m->systems[i].sched, m->systems[i].sys);
            ev.removed++;
        }
    }
    for (uint32_t i = 0; i < m->nsystems; i++) {
        /* kept in their old order; the removed ones are gone from the
         * schedules but their stale pointers are skipped by `rebound` */
        for (uint32_t r = 0; r < g.nrebinds; r++) {
            if (g.rebinds[r].sys == m->systems[i].sys) {
                list[n++] = m->systems[i];
                break;
            }
        }
    }
    for (uint32_t r = 0; r < g.nrebinds; r++) {
        wf_system *sys = g.rebinds[r].sys;
        sys->fn = g.rebinds[r].fn;
        sys->user = g.rebinds[r].user;
        sys->local_desc.init = g.rebinds[r].init;
        sys->local_desc.fini = g.rebinds[r].fini;
        if (g.rebinds[r].decl) {
            /* new queries or access: the graph is rebuilt (and its
             * ambiguities found again) before the schedule runs next */
            wf_system_swap_decl(sys, g.rebinds[r].decl);
            wf_system_destroy(w, g.rebinds[r].decl);
            g.rebinds[r].decl = NULL;
            sys->sched->dirty = true;
        }
    }
    for (uint32_t i = 0; i < g.nadded; i++) {
        list[n++] = g.added[i];
    }
    if (m->systems) {
        wf_free(&w->alloc, m->systems, m->cap_systems * sizeof *m->systems, MOD_ALIGN);
    }
    m->systems = list;
    m->nsystems = n;
    m->cap_systems = keep ? keep : 1;
    stage_free(w, &g);
    dlclose(m->handle);
    m->handle = h;
    m->reloads++;
    ms->reloads++;
    ev.reloads = m->reloads;
    /* the signals: the resource's changed tick marks the reload */
    weft_module_reloads value = {ms->reloads};
    st = wf_resource_insert(w, wf_registry_get(&w->registry, res), &value);
    wf_msg_stream *s = wf_messages_type(w, msg);
    if (!wf_stream_write(&w->alloc, s, &ev) && st == WEFT_OK) {
        st = wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: reloaded, but out of memory writing the "
                      "message '%s'", fn, MSG_NAME);
    }
    return st;
}

void wf_module_unload(weft_module *m)
{
    weft_app *a = m->app;
    wf_modules *ms = a->modules;
    module_drop(m);
    /* its components stay; the next module registering one adopts it
     * (without room, a component is just no module's any more) */
    if (m->ncomps &&
        wf_grow(&a->alloc, (void **)&ms->orphans, &ms->cap_orphans,
                (uint64_t)ms->norphans + m->ncomps, sizeof *ms->orphans, MOD_ALIGN)) {
        memcpy(ms->orphans + ms->norphans, m->comps, m->ncomps * sizeof *m->comps);
        ms->norphans += m->ncomps;
    }
    /* so do its message types */
    if (m->nmsgs &&
        wf_grow(&a->alloc, (void **)&ms->msg_orphans, &ms->cap_msg_orphans,
                (uint64_t)ms->nmsg_orphans + m->nmsgs, sizeof *ms->msg_orphans, MOD_ALIGN)) {
        memcpy(ms->msg_orphans + ms->nmsg_orphans, m->msgs, m->nmsgs * sizeof *m->msgs);
        ms->nmsg_orphans += m->nmsgs;
    }
    for (uint32_t i = 0; i < ms->n; i++) {
        if (ms->v[i] == m) {
            memmove(&ms->v[i], &ms->v[i + 1], (ms->n - i - 1) * sizeof *ms->v);
            ms->n--;
            break;
        }
    }
    module_free(m);
}

/* ---- watching the file ---- */

static void file_look(const char *path, int64_t *size, int64_t *mtime_ns)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        *size = -1;
        *mtime_ns = -1;
        return;
    }
    *size = (int64_t)st.st_size;
    *mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + (int64_t)st.st_mtim.tv_nsec;
}

static void modules_poll(weft_app *a);

/* The app polls while at least one of its modules is watched. */
static void poll_hook_update(weft_app *a)
{
    wf_modules *ms = a->modules;
    bool any = false;
    for (uint32_t i = 0; ms && i < ms->n; i++) {
        any |= ms->v[i]->watched;
    }
    a->modules_poll = any ? modules_poll : NULL;
}

static void watch_stop(weft_module *m)
{
    if (m->wd_fd >= 0 && m->watched) {
        close(m->wd_fd);
    }
    m->wd_fd = -1;
    wf_strfree(&m->app->alloc, m->base);
    m->base = NULL;
    m->watched = false;
    m->pending = false;
}

weft_status wf_module_watch(weft_module *m, bool on, bool polling)
{
    weft_app *a = m->app;
    watch_stop(m);
    if (on) {
        const char *slash = strrchr(m->path, '/');
        m->base = wf_strdup(&a->alloc, slash ? slash + 1 : m->path, NULL);
        if (!m->base) {
            poll_hook_update(a);
            return wf_error(a->world, WEFT_ERR_OUT_OF_MEMORY, "weft_module_watch: out of memory");
        }
        m->polling = polling;
        m->wd_fd = -1;
        if (!polling) {
            char dir[4096];
            size_t n = slash ? (size_t)(slash - m->path) : 0;
            if (n >= sizeof dir) {
                n = 0;
            }
            memcpy(dir, m->path, n);
            dir[n] = '\0';
            if (!slash) {
                strcpy(dir, ".");
            } else if (n == 0) {
                strcpy(dir, "/");
            }
            int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
            if (fd >= 0 && inotify_add_watch(fd, dir, IN_CLOSE_WRITE | IN_MOVED_TO) >= 0) {
                m->wd_fd = fd;
            } else {
                if (fd >= 0) {
                    close(fd);
                }
                m->polling = true; /* the fallback */
            }
        }
        file_look(m->path, &m->seen_size, &m->seen_mtime_ns);
        m->pending = false;
        m->watch_status = WEFT_OK;
        m->watched = true;
    }
    poll_hook_update(a);
    return WEFT_OK;
}

/* Has the file been written completely since the last look? inotify: a
 * writer closed it or a build was renamed over it. Polling: it changed,
 * then stayed the same (size and mtime) for one more look. */
static bool watch_ready(weft_module *m)
{
    if (!m->polling) {
        union {
            struct inotify_event ev;
            char bytes[4096];
        } buf;
        for (;;) {
            ssize_t n = read(m->wd_fd, buf.bytes, sizeof buf.bytes);
            if (n <= 0) {
                break;
            }
            for (ssize_t off = 0; off + (ssize_t)sizeof(struct inotify_event) <= n;) {
                struct inotify_event ev;
                memcpy(&ev, buf.bytes + off, sizeof ev);
                const char *name = buf.bytes + off + sizeof ev;
                if (ev.len && strcmp(name, m->base) == 0) {
                    m->pending = true;
                }
                off += (ssize_t)(sizeof ev + ev.len);
            }
        }
        return m->pending;
    }
    int64_t size, mtime;
    file_look(m->path, &size, &mtime);
    if (size != m->seen_size || mtime != m->seen_mtime_ns) {
        m->seen_size = size;
        m->seen_mtime_ns = mtime;
        m->pending = size >= 0;
        return false; /* still changing, maybe: look once more */
    }
    return m->pending;
}

static void modules_poll(weft_app *a)
{
    wf_modules *ms = a->modules;
    weft_world *w = a->world;
    for (uint32_t i = 0; ms && i < ms->n; i++) {
        weft_module *m = ms->v[i];
        if (!m->watched || !watch_ready(m)) {
            continue;
        }
        m->pending = false;
        m->watch_status = wf_module_reload(m);
        if (m->watch_status != WEFT_OK) {
            wf_log(w, WEFT_LOG_WARN, "module '%s': the new build was not loaded, the old code "
                   "keeps running: %s", m->name, w->last_error);
        }
        if (m->polling) {
            file_look(m->path, &m->seen_size, &m->seen_mtime_ns);
        }
    }
}
