/* src/module/module.c - a module's code loaded from its file, and the
 * file watched: the module room's only platform code (dlopen, ELF,
 * inotify, stat; POSIX). See module_internal.h for the other files.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include "module/module_internal.h"

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

#if UINTPTR_MAX > 0xffffffffu
typedef Elf64_Ehdr mod_ehdr;
typedef Elf64_Phdr mod_phdr;
#  define MOD_ELFCLASS ELFCLASS64
#else
typedef Elf32_Ehdr mod_ehdr;
typedef Elf32_Phdr mod_phdr;
#  define MOD_ELFCLASS ELFCLASS32
#endif

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
weft_status wf_mod_load_copy(weft_world *w, const char *path, void **out_handle,
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


void wf_mod_code_close(void *handle)
{
    dlclose(handle);
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

void wf_mod_watch_stop(weft_module *m)
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
    wf_mod_watch_stop(m);
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
