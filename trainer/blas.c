/* SPDX-License-Identifier: Apache-2.0 */
/* trainer/blas.c: the OpenBLAS kernels the models run (dpzo/blas.h).
 *
 * The decision (dpzo_blas_choose) is a pure function of OpenBLAS's own choice, the CPU's
 * features and the environment, so tests/test_blas.c checks it for CPUs this machine is
 * not. Applying it uses two functions that OpenBLAS's DYNAMIC_ARCH builds export,
 * gotoblas_dynamic_quit and gotoblas_dynamic_init: the second reads OPENBLAS_CORETYPE
 * exactly as OpenBLAS's load does, so a switch is the documented environment variable
 * applied after loading. Both are weak references: an OpenBLAS built for one CPU has
 * neither, and then nothing is switched (and the reason says so). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <cblas.h>
#include "dpzo/blas.h"
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* OpenBLAS's DYNAMIC_ARCH entry points (driver/others/dynamic.c): quit forgets the kernel
 * table, init chooses one again (OPENBLAS_CORETYPE first, else by cpuid) and sets its
 * blocking parameters. */
extern void gotoblas_dynamic_init(void) __attribute__((weak));
extern void gotoblas_dynamic_quit(void) __attribute__((weak));

/* snprintf that may truncate (the messages fit their fields; a longer one is cut) */
__attribute__((format(printf, 3, 4))) static void fmt(char *dst, size_t size, const char *f,
                                                      ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(dst, size, f, ap);
    va_end(ap);
}

unsigned dpzo_cpu_features(void)
{
    unsigned f = 0;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return 0;
    unsigned max_leaf = a;
    /* "AuthenticAMD": ebx "Auth", edx "enti", ecx "cAMD"; Hygon's Dhyana is a Zen */
    if ((b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u) ||
        (b == 0x6f677948u && d == 0x6e65476eu && c == 0x656e6975u))
        f |= DPZO_CPU_AMD;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return f;
    int osxsave = (c >> 27) & 1;
    if ((c >> 28) & 1)
        f |= DPZO_CPU_AVX;
    if ((c >> 12) & 1)
        f |= DPZO_CPU_FMA;
    if (osxsave) {
        unsigned lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        (void)hi;
        if ((lo & 0x6u) == 0x6u) /* XMM and YMM state */
            f |= DPZO_CPU_OS_YMM;
        if ((lo & 0xe6u) == 0xe6u) /* and opmask, ZMM_Hi256, Hi16_ZMM */
            f |= DPZO_CPU_OS_ZMM;
    }
    if (max_leaf >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        if ((b >> 5) & 1)
            f |= DPZO_CPU_AVX2;
        if ((b >> 16) & 1)
            f |= DPZO_CPU_AVX512F;
        if ((b >> 17) & 1)
            f |= DPZO_CPU_AVX512DQ;
        if ((b >> 28) & 1)
            f |= DPZO_CPU_AVX512CD;
        if ((b >> 30) & 1)
            f |= DPZO_CPU_AVX512BW;
        if ((b >> 31) & 1)
            f |= DPZO_CPU_AVX512VL;
        unsigned max7 = a;
        if (max7 >= 1) {
            __cpuid_count(7, 1, a, b, c, d);
            if ((a >> 5) & 1)
                f |= DPZO_CPU_AVX512BF16;
        }
    }
#endif
    return f;
}

dpzo_isa dpzo_cpu_isa(unsigned f)
{
    const unsigned avx512 = DPZO_CPU_AVX512F | DPZO_CPU_AVX512CD | DPZO_CPU_AVX512BW |
                            DPZO_CPU_AVX512DQ | DPZO_CPU_AVX512VL | DPZO_CPU_OS_ZMM;
    const unsigned avx2 = DPZO_CPU_AVX | DPZO_CPU_AVX2 | DPZO_CPU_FMA | DPZO_CPU_OS_YMM;
    if ((f & avx2) != avx2)
        return (f & (DPZO_CPU_AVX | DPZO_CPU_OS_YMM)) == (DPZO_CPU_AVX | DPZO_CPU_OS_YMM)
                   ? DPZO_ISA_AVX
                   : DPZO_ISA_SSE;
    return (f & avx512) == avx512 ? DPZO_ISA_AVX512 : DPZO_ISA_AVX2;
}

const char *dpzo_isa_name(dpzo_isa isa)
{
    switch (isa) {
    case DPZO_ISA_AVX:
        return "AVX";
    case DPZO_ISA_AVX2:
        return "AVX2";
    case DPZO_ISA_AVX512:
        return "AVX-512";
    default:
        return "SSE";
    }
}

/* OpenBLAS's x86-64 kernel sets (its corename table) by the widest vector code they run. */
static const struct {
    const char *name;
    dpzo_isa isa;
} CORES[] = {
    {"Katmai", DPZO_ISA_SSE},       {"Coppermine", DPZO_ISA_SSE},  {"Northwood", DPZO_ISA_SSE},
    {"Prescott", DPZO_ISA_SSE},     {"Banias", DPZO_ISA_SSE},      {"Atom", DPZO_ISA_SSE},
    {"Core2", DPZO_ISA_SSE},        {"Penryn", DPZO_ISA_SSE},      {"Dunnington", DPZO_ISA_SSE},
    {"Nehalem", DPZO_ISA_SSE},      {"Athlon", DPZO_ISA_SSE},      {"Opteron", DPZO_ISA_SSE},
    {"Opteron_SSE3", DPZO_ISA_SSE}, {"Barcelona", DPZO_ISA_SSE},   {"Nano", DPZO_ISA_SSE},
    {"Bobcat", DPZO_ISA_SSE},       {"Sandybridge", DPZO_ISA_AVX}, {"Bulldozer", DPZO_ISA_AVX},
    {"Piledriver", DPZO_ISA_AVX},   {"Steamroller", DPZO_ISA_AVX}, {"Excavator", DPZO_ISA_AVX},
    {"Haswell", DPZO_ISA_AVX2},     {"Zen", DPZO_ISA_AVX2},        {"SkylakeX", DPZO_ISA_AVX512},
    {"Cooperlake", DPZO_ISA_AVX512}, {"SapphireRapids", DPZO_ISA_AVX512},
};

int dpzo_blas_core_isa(const char *core)
{
    if (core == NULL)
        return -1;
    for (size_t i = 0; i < sizeof CORES / sizeof CORES[0]; i++)
        if (strcasecmp(core, CORES[i].name) == 0)
            return (int)CORES[i].isa;
    return -1;
}

__attribute__((format(printf, 3, 4))) static void keep(dpzo_blas_choice *out,
                                                       const char *chosen, const char *why,
                                                       ...)
{
    out->do_switch = 0;
    fmt(out->core, sizeof out->core, "%s", chosen != NULL ? chosen : "unknown");
    va_list ap;
    va_start(ap, why);
    vsnprintf(out->reason, sizeof out->reason, why, ap);
    va_end(ap);
}

void dpzo_blas_choose(const char *chosen, unsigned features, const char *env_coretype,
                      const char *env_select, dpzo_blas_choice *out)
{
    dpzo_isa cpu = dpzo_cpu_isa(features);
    const char *cpu_name = dpzo_isa_name(cpu);
    /* OpenBLAS reads an empty OPENBLAS_CORETYPE as an unknown name and falls back to its
     * generic kernels: that is no choice of kernels, so it counts as unset */
    if (env_coretype != NULL && env_coretype[0] != '\0') {
        keep(out, chosen, "OPENBLAS_CORETYPE=%s is set: OpenBLAS's kernels are kept (%s CPU)",
             env_coretype, cpu_name);
        return;
    }
    if (env_select != NULL && strcmp(env_select, "0") == 0) {
        keep(out, chosen, "DPZO_BLAS_SELECT=0: OpenBLAS's own choice is kept (%s CPU)", cpu_name);
        return;
    }
    int have = dpzo_blas_core_isa(chosen);
    if (have < 0) {
        keep(out, chosen, "kernels '%s' are not in dpzo's table: kept (%s CPU)",
             chosen != NULL ? chosen : "unknown", cpu_name);
        return;
    }
    /* OpenBLAS picks AVX2 kernels on some AVX-512 CPUs on purpose (one FMA unit, clock
     * penalties); only its generic fallbacks, older than AVX2, are replaced. */
    if (have >= (int)DPZO_ISA_AVX2 || have >= (int)cpu) {
        keep(out, chosen, "OpenBLAS chose them for this %s CPU", cpu_name);
        return;
    }
    const char *to;
    if (cpu == DPZO_ISA_AVX512)
        to = (features & DPZO_CPU_AVX512BF16) ? "Cooperlake" : "SkylakeX";
    else if (cpu == DPZO_ISA_AVX2)
        to = (features & DPZO_CPU_AMD) ? "Zen" : "Haswell";
    else
        to = (features & DPZO_CPU_AMD) ? "Bulldozer" : "Sandybridge";
    out->do_switch = 1;
    fmt(out->core, sizeof out->core, "%s", to);
    fmt(out->reason, sizeof out->reason,
             "OpenBLAS did not know this %s CPU and chose its %s kernels %s: switched to %s",
             cpu_name, dpzo_isa_name((dpzo_isa)have), chosen, to);
}

static pthread_once_t select_once = PTHREAD_ONCE_INIT;
static dpzo_blas_info selected;

static void copy_str(char *dst, size_t size, const char *src)
{
    fmt(dst, size, "%s", src != NULL ? src : "unknown");
}

static void do_select(void)
{
    dpzo_blas_info *in = &selected;
    copy_str(in->chosen, sizeof in->chosen, openblas_get_corename());
    unsigned f = dpzo_cpu_features();
    copy_str(in->cpu, sizeof in->cpu, dpzo_isa_name(dpzo_cpu_isa(f)));
    dpzo_blas_choice c;
    dpzo_blas_choose(in->chosen, f, getenv("OPENBLAS_CORETYPE"), getenv("DPZO_BLAS_SELECT"),
                     &c);
    copy_str(in->reason, sizeof in->reason, c.reason);
    if (c.do_switch) {
        if (gotoblas_dynamic_init == NULL || gotoblas_dynamic_quit == NULL) {
            fmt(in->reason, sizeof in->reason,
                     "OpenBLAS chose %s kernels on this %s CPU, and this OpenBLAS (built "
                     "without DYNAMIC_ARCH) cannot switch to %s",
                     in->chosen, in->cpu, c.core);
        } else {
            /* OPENBLAS_CORETYPE is unset here (the choice keeps everything otherwise):
             * set it for OpenBLAS's init to read, then remove it again, so that child
             * processes make their own choice */
            gotoblas_dynamic_quit();
            setenv("OPENBLAS_CORETYPE", c.core, 1);
            gotoblas_dynamic_init();
            unsetenv("OPENBLAS_CORETYPE");
            const char *now = openblas_get_corename();
            in->switched = now != NULL && strcasecmp(now, in->chosen) != 0;
            if (now == NULL || strcasecmp(now, c.core) != 0)
                fmt(in->reason, sizeof in->reason,
                         "OpenBLAS chose %s kernels on this %s CPU; asked for %s, it runs %s",
                         in->chosen, in->cpu, c.core, now != NULL ? now : "unknown");
        }
    }
    copy_str(in->core, sizeof in->core, openblas_get_corename());
    /* after the switch: OpenBLAS's configuration string names the kernels in use */
    copy_str(in->library, sizeof in->library, openblas_get_config());
}

void dpzo_blas_select(dpzo_blas_info *info)
{
    pthread_once(&select_once, do_select);
    if (info != NULL)
        *info = selected;
}

void dpzo_blas_describe(const dpzo_blas_info *in, char *buf, size_t size)
{
    /* "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64": the
     * first two words name the library; the kernels are said separately */
    char lib[64];
    int n = 0;
    const char *p = in->library;
    for (int words = 0; *p != '\0' && (size_t)n + 1 < sizeof lib; p++) {
        if (*p == ' ' && ++words == 2)
            break;
        lib[n++] = *p;
    }
    lib[n] = '\0';
    fmt(buf, size, "%s, %s kernels (%s)", lib, in->core, in->reason);
}
