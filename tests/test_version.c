/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_version.c: the version macros of dpzo/version.h against CMakeLists.txt's
 * project(dpzo VERSION ...) (DPZO_PROJECT_VERSION, from CMake) and against the library's
 * answers, dpzo_version() and dpzo_version_number(). Linked to libdpzo.so (target
 * dpzo_shared), the artifact users load, not the archives. */
#include <dpzo/version.h> /* first, alone: it must stand on its own */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

#ifndef DPZO_PROJECT_VERSION
#error "DPZO_PROJECT_VERSION must be CMake's PROJECT_VERSION"
#endif
/* The macros are usable in #if (plain integer constant expressions). */
#if !defined(DPZO_VERSION_NUMBER) || DPZO_VERSION_NUMBER < 0 || DPZO_VERSION_MINOR > 99 \
    || DPZO_VERSION_PATCH > 99
#error "DPZO_VERSION_NUMBER is not a preprocessor number"
#endif

/* "x.y.z" -> x * 10000 + y * 100 + z, or -1 when it is not three numbers. */
static long number_of(const char *text)
{
    unsigned a, b, c;
    char tail;
    if (sscanf(text, "%u.%u.%u%c", &a, &b, &c, &tail) != 3)
        return -1;
    return 10000L * a + 100L * b + c;
}

static void test_macros_are_the_project_version(void **state)
{
    (void)state;
    char parts[64];
    snprintf(parts, sizeof parts, "%d.%d.%d", DPZO_VERSION_MAJOR, DPZO_VERSION_MINOR,
             DPZO_VERSION_PATCH);
    assert_string_equal(parts, DPZO_PROJECT_VERSION);
    assert_string_equal(DPZO_VERSION_STRING, DPZO_PROJECT_VERSION);
    assert_string_equal(DPZO_VERSION, DPZO_VERSION_STRING);
    assert_int_equal(DPZO_VERSION_NUMBER, number_of(DPZO_PROJECT_VERSION));
    assert_int_equal(number_of("0.1.0"), 100); /* the rule itself */
    assert_int_equal(number_of("1.2.3"), 10203);
    assert_int_equal(number_of("1.2"), -1);
}

static void test_library_answers_the_same(void **state)
{
    (void)state;
    assert_non_null(dpzo_version());
    assert_string_equal(dpzo_version(), DPZO_VERSION_STRING);
    assert_int_equal(dpzo_version_number(), DPZO_VERSION_NUMBER);
    assert_int_equal(dpzo_version_number(), number_of(dpzo_version()));
    /* the compatibility rule of dpzo/status.h: same major.minor while major is 0 */
    assert_int_equal(dpzo_version_number() / 100, DPZO_VERSION_NUMBER / 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_macros_are_the_project_version),
        cmocka_unit_test(test_library_answers_the_same),
    };
    return cmocka_run_group_tests_name("version", tests, NULL, NULL);
}
