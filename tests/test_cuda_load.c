/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_cuda_load.c: libdpzo.so's CUDA entry points when the kernels' library
 * libdpzo_cuda.so cannot be loaded (kernels/cuda/load.c): every one fails cleanly, with
 * DPZO_EUNSUPPORTED (as without a device) and a message that says what was missing, in
 * dlerror's words; nothing aborts; accounting still answers. Linked to libdpzo.so, as a user
 * program would be. Modes (ctest runs each, tests/kernels_tests.cmake):
 *   missing PATH   $DPZO_CUDA_LIBRARY = PATH, a file that does not exist;
 *   foreign PATH   $DPZO_CUDA_LIBRARY = PATH, a shared library that is not dpzo's kernels;
 *   default        no $DPZO_CUDA_LIBRARY: the build tree's libdpzo_cuda.so beside
 *                  libdpzo.so is found, so any failure is the CUDA runtime's or the
 *                  device's, never "not loaded"; with a usable device, memory round-trips. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "dpzo/cuda.h"
#include "dpzo/zo_dir.h"

static const char *mode = "default", *path = "";

static void assert_contains(const char *s, const char *part)
{
    if (s == NULL || strstr(s, part) == NULL)
        fail_msg("\"%s\" does not contain \"%s\"", s != NULL ? s : "(null)", part);
}

/* st is DPZO_EUNSUPPORTED and the context's message carries the loader's reason. */
static void assert_unsupported(dpzo_ctx *ctx, dpzo_status st, const char *what)
{
    if (st != DPZO_EUNSUPPORTED)
        fail_msg("%s: %s (%s), expected DPZO_EUNSUPPORTED", what, dpzo_status_name(st),
                 dpzo_ctx_errmsg(ctx));
    assert_contains(dpzo_ctx_errmsg(ctx), "no usable device (CUDA kernels not loaded: ");
    assert_contains(dpzo_ctx_errmsg(ctx), path);
}

static void test_not_loaded(void **state)
{
    dpzo_ctx *ctx = *state;
    assert_int_equal(dpzo_cuda_available(), 0);
    const char *why = dpzo_cuda_unavailable_reason();
    print_message("reason: %s\n", why);
    assert_contains(why, "CUDA kernels not loaded: DPZO_CUDA_LIBRARY=");
    assert_contains(why, path);
    if (strcmp(mode, "missing") == 0)
        assert_contains(why, ": cannot open shared object file: No such file or directory");
    else
        assert_contains(why, "has no dpzo__cu_ops_v1 (not dpzo's CUDA library)");

    char name[64] = "unchanged";
    int major = -1, minor = -1, sms = -1;
    assert_unsupported(ctx, dpzo_cuda_device_info(ctx, name, sizeof name, &major, &minor, &sms),
                       "device_info");
    assert_string_equal(name, "unchanged");
    /* argument checks come first and need no library */
    assert_int_equal(dpzo_cuda_set_launch(ctx, 0, 0), DPZO_OK);
    assert_int_equal(dpzo_cuda_set_launch(ctx, 1, 33), DPZO_EINVAL);
    void *p = (void *)&major;
    assert_unsupported(ctx, dpzo_cuda_malloc(ctx, &p, 64), "malloc");
    assert_null(p);
    dpzo_cuda_free((void *)&major); /* nothing to free it with: a no-op, no crash */
    float host[4] = {1, 2, 3, 4}, dev[4];
    assert_unsupported(ctx, dpzo_cuda_to_device(ctx, dev, host, sizeof host), "to_device");
    assert_unsupported(ctx, dpzo_cuda_to_host(ctx, host, dev, sizeof host), "to_host");
    assert_unsupported(ctx, dpzo_cuda_synchronize(ctx), "synchronize");

    dpzo_dir d, s;
    assert_ok(ctx, dpzo_cuda_dir_init(ctx, &d, DPZO_DIR_GAUSSIAN, 7, 0, 0, 4, 1.0)); /* CPU */
    assert_unsupported(ctx, dpzo_cuda_dir_init(ctx, &s, DPZO_DIR_SPHERE, 7, 0, 0, 4, 1.0),
                       "dir_init sphere");
    double sumsq = -1.0, alpha[2] = {0.5, -0.25};
    assert_unsupported(ctx, dpzo_cuda_dir_sumsq(ctx, &d, &sumsq), "sumsq");
    assert_true(sumsq == -1.0);
    assert_unsupported(ctx, dpzo_cuda_dir_fill(ctx, &d, 0, 4, dev), "fill");
    assert_unsupported(ctx, dpzo_cuda_dir_axpy(ctx, &d, 0, 4, 0.5, dev), "axpy");
    dpzo_dir two[2] = {d, d};
    assert_unsupported(ctx, dpzo_cuda_dir_axpy_multi(ctx, two, alpha, 2, 0, 4, dev),
                       "axpy_multi");
    assert_unsupported(ctx, dpzo_cuda_dir_perturb(ctx, &d, 0, 4, 0.5, DPZO_F32, dev, dev, NULL),
                       "perturb");
    assert_unsupported(ctx, dpzo_cuda_dir_update(ctx, two, alpha, 2, 0, 4, DPZO_BF16, dev, NULL),
                       "update");
    double diff[4] = {1, 2, 3, 4}, qsum[2];
    assert_unsupported(ctx,
                       dpzo_cuda_clip_sum(ctx, diff, 2, 2, DPZO_CUDA_CLIP_L2, 1.0, qsum, NULL),
                       "clip_sum");
    /* the same reason on every call: the attempt is made once */
    assert_string_equal(dpzo_cuda_unavailable_reason(), why);
}

/* Accounting does not care: TF Privacy's MNIST run, docs/install.md's eps.c. */
static void test_accounting_unaffected(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_event *e = sgm_event(ctx, 256.0 / 60000, 1.1, 14063);
    dpzo_dp_result r;
    assert_ok(ctx, dpzo_event_epsilon(ctx, e, 1e-5, NULL, &r));
    dpzo_event_free(e);
    assert_true(r.epsilon == 2.5966419148568232);
}

static void test_default(void **state)
{
    dpzo_ctx *ctx = *state;
    const char *why = dpzo_cuda_unavailable_reason();
    print_message("available %d, reason: \"%s\"\n", dpzo_cuda_available(), why);
    if (strstr(why, "CUDA kernels not loaded") != NULL) {
        /* the build tree's library could not be opened: only its CUDA runtime may be the
         * reason, never that it was not found */
        assert_contains(why, "libdpzo_cuda.so: libcudart.so");
        return;
    }
    if (!dpzo_cuda_available()) {
        void *p = NULL;
        assert_int_equal(dpzo_cuda_malloc(ctx, &p, 64), DPZO_EUNSUPPORTED);
        assert_contains(dpzo_ctx_errmsg(ctx), why);
        return;
    }
    float host[4] = {1, -2, 3.5f, 0.25f}, back[4] = {0};
    void *p = NULL;
    assert_ok(ctx, dpzo_cuda_malloc(ctx, &p, sizeof host));
    assert_ok(ctx, dpzo_cuda_to_device(ctx, p, host, sizeof host));
    assert_ok(ctx, dpzo_cuda_to_host(ctx, back, p, sizeof host));
    dpzo_cuda_free(p);
    assert_memory_equal(host, back, sizeof host);
}

int main(int argc, char **argv)
{
    if (argc >= 2)
        mode = argv[1];
    if (argc >= 3)
        path = argv[2];
    const char *env = getenv("DPZO_CUDA_LIBRARY");
    if (strcmp(mode, "default") != 0 && (env == NULL || strcmp(env, path) != 0)) {
        fprintf(stderr, "test_cuda_load %s: DPZO_CUDA_LIBRARY must be %s\n", mode, path);
        return 2;
    }
    const struct CMUnitTest failing[] = {
        cmocka_unit_test_setup_teardown(test_not_loaded, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_accounting_unaffected, ctx_setup, ctx_teardown),
    };
    const struct CMUnitTest found[] = {
        cmocka_unit_test_setup_teardown(test_default, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_accounting_unaffected, ctx_setup, ctx_teardown),
    };
    if (strcmp(mode, "default") == 0)
        return cmocka_run_group_tests(found, NULL, NULL);
    return cmocka_run_group_tests(failing, NULL, NULL);
}
