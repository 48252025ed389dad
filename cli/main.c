/* SPDX-License-Identifier: Apache-2.0 */
/* cli/main.c: `dpzo`, the command-line front end. Parsing and printing only; every
 * computation is a call into the library. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dpzo/dpzo.h>
#include "args.h"
#include "commands.h"

static const char *usage =
    "dpzo " DPZO_VERSION ": differential privacy accounting for private training\n"
    "\n"
    "usage: dpzo COMMAND [OPTIONS]   (dpzo COMMAND --help for each command's options)\n"
    "\n"
    "commands:\n"
    "  epsilon    epsilon(delta) of Poisson-sampled Gaussian training (a schedule, any event)\n"
    "  delta      delta(epsilon) of the same\n"
    "  rdp        the RDP curve at chosen orders, with certified lower/upper bounds\n"
    "  calibrate  smallest noise multiplier (or largest steps / sampling rate) for a target\n"
    "  demo       calibration and epsilon report for a typical DP fine-tuning run\n"
    "  profile    noise profiles: calibrate a Gaussian one, show or verify a profile file\n"
    "  lmo        LMO-DP noise: info, RDP, run epsilon, sampling, and the offline search\n"
    "  train      DP zeroth-order training (DPZero) and baselines (MeZO, DP-SGD, SGD)\n"
    "  audit      check published (epsilon, delta) claims; epsilon lower bounds from attacks\n"
    "  plot       privacy curves and noise densities as PNG or SVG (gnuplot)\n"
    "  help       dpzo help COMMAND [SUBCOMMAND]: the same as dpzo COMMAND [SUBCOMMAND] --help\n"
    "\n"
    "options:\n"
    "  --version  the versions of this command and of the dpzo library it runs on\n"
    "  --help, -h this text (also dpzo help)\n"
    "\n"
    "Every epsilon reported as a guarantee is a proven upper bound (certified MPFR path).\n"
    "Exit status (docs/cli.md): 0 done; 1 a valid request without an answer (the profile\n"
    "does not hold, no value meets the target, over --memory-limit, gnuplot missing); 2 a\n"
    "request that cannot be carried out as given (usage, a value, an input that cannot be\n"
    "read, an output that cannot be written, standard output included).\n";

typedef struct {
    const char *name;
    int (*run)(int, char **);
} command;

static const command cmds[] = {
    {"epsilon", cmd_epsilon}, {"delta", cmd_delta}, {"rdp", cmd_rdp},
    {"calibrate", cmd_calibrate}, {"demo", cmd_demo}, {"profile", cmd_profile},
    {"lmo", cmd_lmo}, {"train", cmd_train}, {"audit", cmd_audit},
    {"plot", cmd_plot}};
enum { NCMDS = sizeof cmds / sizeof *cmds };

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < NCMDS; i++)
        if (strcmp(name, cmds[i].name) == 0)
            return &cmds[i];
    return NULL;
}

/* "unknown command 'WORD'" with the nearest command when it is plausibly a typo, and the
 * list of commands; exit status 2. */
static int unknown_command(const char *word)
{
    opt_spec specs[NCMDS + 2];
    char list[256];
    size_t used = 0;
    for (size_t i = 0; i < NCMDS; i++) {
        specs[i] = (opt_spec){cmds[i].name, 0};
        used += (size_t)snprintf(list + used, sizeof list - used, "%s, ", cmds[i].name);
    }
    snprintf(list + used, sizeof list - used, "help"); /* 76 bytes in all */
    specs[NCMDS] = (opt_spec){"help", 0};
    specs[NCMDS + 1] = (opt_spec){NULL, 0};
    const char *near = args_nearest(specs, word, strlen(word));
    if (near != NULL)
        return cli_usage_error("unknown command '%s'; did you mean %s? (commands: %s)", word,
                               near, list);
    return cli_usage_error("unknown command '%s' (commands: %s)", word, list);
}

/* dpzo help [COMMAND [WORDS...]]: dpzo COMMAND [WORDS...] --help; alone, dpzo --help. */
static int help(int argc, char **argv)
{
    if (argc == 0 || strcmp(argv[0], "help") == 0 || strcmp(argv[0], "--help") == 0
        || strcmp(argv[0], "-h") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    const command *c = find_command(argv[0]);
    if (c == NULL)
        return unknown_command(argv[0]);
    char **words = malloc(((size_t)argc + 1) * sizeof *words);
    if (words == NULL) {
        fputs("dpzo: error: out of memory\n", stderr);
        return 1;
    }
    for (int i = 1; i < argc; i++)
        words[i - 1] = argv[i];
    static char help_option[] = "--help";
    words[argc - 1] = help_option;
    words[argc] = NULL;
    int status = c->run(argc, words);
    free(words);
    return status;
}

/* Standard output is an output like -o FILE: what did not reach it (a full disk, /dev/full,
 * a closed descriptor) is found when the last buffer is flushed, and a command that
 * answered but could not deliver the answer exits 2 with the reason (docs/cli.md), never 0
 * in silence. A command that already failed keeps its status. */
static int flush_stdout(int status)
{
    errno = 0;
    int bad = fflush(stdout) != 0;
    int err = errno;
    if (!bad && !ferror(stdout))
        return status;
    if (err != 0)
        fprintf(stderr, "dpzo: error: standard output: cannot write: %s\n", strerror(err));
    else
        fputs("dpzo: error: standard output: cannot write: a write failed\n", stderr);
    return status != 0 ? status : 2;
}

static int run_command(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    if (strcmp(argv[1], "help") == 0)
        return help(argc - 2, argv + 2);
    if (strcmp(argv[1], "--version") == 0) {
        if (argc > 2)
            return cli_usage_error("unexpected argument '%s' (dpzo --version takes none)",
                                   argv[2]);
        /* The command's own version, then the library's: the same here (the command links
         * dpzo's code statically), but a build against another libdpzo would show both. */
        printf("dpzo %s\n", DPZO_VERSION_STRING);
        printf("libdpzo %s (accountants: rdp, pld, prv)\n", dpzo_version());
        return 0;
    }
    const command *c = find_command(argv[1]);
    if (c != NULL)
        return c->run(argc - 2, argv + 2);
    return unknown_command(argv[1]);
}

int main(int argc, char **argv) { return flush_stdout(run_command(argc, argv)); }
