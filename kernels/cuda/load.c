/* SPDX-License-Identifier: Apache-2.0 */
/* kernels/cuda/load.c: the launchers of zo_cuda.h in libdpzo.so, the CLI and the tests of a
 * CUDA build: each forwards to libdpzo_cuda.so (kernels/cuda/cu_ops.h), which is opened at
 * the first call. Nothing here needs the CUDA runtime, so libdpzo.so has no NEEDED entry for
 * it and accounting runs where there is none.
 *
 * Where the library is looked for, in this order:
 *   1. $DPZO_CUDA_LIBRARY, when set and not empty: that path (or name) only;
 *   2. the folder of the object this code was linked into (libdpzo.so's folder; for an
 *      executable, its own folder), then that folder's ../lib (bin/dpzo -> lib/, the layout
 *      of a build tree, an installed prefix and the wheel's dpzo/bin, dpzo/lib);
 *   3. dlopen's own search (LD_LIBRARY_PATH, the caller's RUNPATH, ld.so.cache).
 * The first file that exists is the one used: if it cannot be loaded (its CUDA runtime,
 * libcudart.so, is missing, or it comes from another dpzo build) the reason, dlerror's text,
 * is what dpzo_cuda_unavailable_reason() and every CUDA entry point's message say, and the
 * entry points fail with DPZO_EUNSUPPORTED as without a device. The attempt is made once per
 * process. */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cu_ops.h"

#ifndef DPZO_CU_VERSION
#error "DPZO_CU_VERSION (the dpzo version) must be defined by the build"
#endif

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const dpzo__cu_ops *ops;
/* Why ops is NULL: a static message, kept short enough for a context's message (512). */
static char why[384];
static size_t why_len;

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
    if (why_len + 1 >= sizeof why)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(why + why_len, sizeof why - why_len, fmt, ap);
    va_end(ap);
    if (n > 0)
        why_len = why_len + (size_t)n < sizeof why ? why_len + (size_t)n : sizeof why - 1;
}

/* The folder of the object (shared library or executable) that holds this code, into dir;
 * 0 when it cannot be told. */
static int own_folder(char *dir, size_t cap)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (dladdr1(&load_once, &info, (void **)&map, RTLD_DL_LINKMAP) == 0 || map == NULL)
        return 0;
    char path[PATH_MAX];
    if (map->l_name == NULL || map->l_name[0] == '\0') { /* the main program */
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n <= 0)
            return 0;
        path[n] = '\0';
    } else if (realpath(map->l_name, path) == NULL) {
        return 0;
    }
    char *slash = strrchr(path, '/');
    if (slash == NULL)
        return 0;
    *slash = '\0';
    int n = snprintf(dir, cap, "%s", path[0] != '\0' ? path : "/");
    return n > 0 && (size_t)n < cap;
}

/* 1: loaded (ops set); 0: failed, the reason noted. */
static int open_lib(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *e = dlerror();
        if (e == NULL)
            note("%s: dlopen failed", path);
        else if (strstr(e, path) == NULL) /* a dependency's error: say whose */
            note("%s: %s", path, e);
        else
            note("%s", e);
        return 0;
    }
    void *sym = dlsym(h, DPZO_CU_OPS_SYMBOL);
    if (sym == NULL) {
        note("%s has no %s (not dpzo's CUDA library)", path, DPZO_CU_OPS_SYMBOL);
        dlclose(h);
        return 0;
    }
    dpzo__cu_ops_fn get;
    memcpy(&get, &sym, sizeof get);
    const dpzo__cu_ops *t = get();
    if (t == NULL || t->abi != DPZO_CU_OPS_ABI || t->size != sizeof *t || t->version == NULL ||
        strcmp(t->version, DPZO_CU_VERSION) != 0) {
        note("%s comes from another dpzo build (version %s, table %u), this is dpzo %s "
             "(table %u)",
             path, t != NULL && t->version != NULL ? t->version : "?", t != NULL ? t->abi : 0u,
             DPZO_CU_VERSION, DPZO_CU_OPS_ABI);
        dlclose(h);
        return 0;
    }
    ops = t;
    return 1;
}

static void load(void)
{
    note("CUDA kernels not loaded: ");
    const char *env = getenv("DPZO_CUDA_LIBRARY");
    if (env != NULL && env[0] != '\0') {
        note("DPZO_CUDA_LIBRARY=%s: ", env);
        open_lib(env);
        return;
    }
    char dir[PATH_MAX], path[PATH_MAX + 32];
    if (own_folder(dir, sizeof dir)) {
        const char *base = strrchr(dir, '/');
        int n_try = base != NULL && strcmp(base, "/lib") == 0 ? 1 : 2;
        for (int i = 0; i < n_try; i++) {
            int n = snprintf(path, sizeof path, i == 0 ? "%s/%s" : "%s/../lib/%s", dir,
                             DPZO_CU_LIBRARY_NAME);
            if (n <= 0 || (size_t)n >= sizeof path)
                continue;
            if (access(path, F_OK) == 0) { /* the first one there is the one */
                open_lib(path);
                return;
            }
            if (i == 0)
                note("%s is not in %s", DPZO_CU_LIBRARY_NAME, dir);
            else
                note(" nor in its ../lib");
        }
        note("; ");
    }
    open_lib(DPZO_CU_LIBRARY_NAME);
}

static const dpzo__cu_ops *get_ops(void)
{
    pthread_once(&load_once, load);
    return ops;
}

const char *dpzo__cu_probe(int *ok)
{
    const dpzo__cu_ops *o = get_ops();
    if (o == NULL) {
        *ok = 0;
        return why;
    }
    return o->probe(ok);
}

const char *dpzo__cu_device_info(char *name, size_t name_len, int *major, int *minor, int *sms)
{
    const dpzo__cu_ops *o = get_ops();
    return o != NULL ? o->device_info(name, name_len, major, minor, sms) : why;
}

void dpzo__cu_set_launch(unsigned blocks, unsigned threads)
{
    const dpzo__cu_ops *o = get_ops();
    if (o != NULL)
        o->set_launch(blocks, threads);
}

const char *dpzo__cu_malloc(void **p, size_t bytes)
{
    const dpzo__cu_ops *o = get_ops();
    if (o != NULL)
        return o->mem_alloc(p, bytes);
    *p = NULL;
    return why;
}

void dpzo__cu_free(void *p)
{
    const dpzo__cu_ops *o = get_ops();
    if (o != NULL)
        o->mem_free(p);
}

const char *dpzo__cu_copy(void *dst, const void *src, size_t bytes, int to_device)
{
    const dpzo__cu_ops *o = get_ops();
    return o != NULL ? o->copy(dst, src, bytes, to_device) : why;
}

const char *dpzo__cu_sync(void)
{
    const dpzo__cu_ops *o = get_ops();
    return o != NULL ? o->sync() : why;
}

const char *dpzo__cu_apply(const dpzo_dir *dirs, const double *alpha, unsigned k, int axpy,
                           uint64_t j0, size_t n, float *out)
{
    const dpzo__cu_ops *o = get_ops();
    return o != NULL ? o->apply(dirs, alpha, k, axpy, j0, n, out) : why;
}

const char *dpzo__cu_typed(const dpzo_dir *dirs, const double *alpha, unsigned k, int dt,
                           uint64_t j0, size_t n, const void *x, void *out, void *stream)
{
    const dpzo__cu_ops *o = get_ops();
    return o != NULL ? o->typed(dirs, alpha, k, dt, j0, n, x, out, stream) : why;
}

const char *dpzo__cu_sumsq(const dpzo_dir *dir, double *total)
{
    const dpzo__cu_ops *o = get_ops();
    return o != NULL ? o->sumsq(dir, total) : why;
}

const char *dpzo__cu_clip_sum(double *diff, size_t b, unsigned Q, int mode, double clip,
                              double *qsum, double *factor)
{
    const dpzo__cu_ops *o = get_ops();
    return o != NULL ? o->clip_sum(diff, b, Q, mode, clip, qsum, factor) : why;
}
