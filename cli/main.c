/* cli/main.c: `dpzo`, the command-line front end. Parsing and printing only; every
 * computation is a call into the library. */
#include <stdio.h>
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
    "  epsilon    epsilon(delta) of Poisson-sampled Gaussian training (or a schedule)\n"
    "  delta      delta(epsilon) of the same\n"
    "  rdp        the RDP curve at chosen orders, with certified lower/upper bounds\n"
    "  calibrate  smallest noise multiplier (or largest steps / sampling rate) for a target\n"
    "  demo       calibration and epsilon report for a typical DP fine-tuning run\n"
    "  profile    noise profiles: calibrate a Gaussian one, show or verify a profile file\n"
    "  lmo        LMO-DP noise: info, RDP, run epsilon, sampling, and the offline search\n"
    "  train      DP zeroth-order training (DPZero) and baselines (MeZO, DP-SGD, SGD)\n"
    "  audit      check published (epsilon, delta) claims; epsilon lower bounds from attacks\n"
    "  plot       privacy curves and noise densities as PNG or SVG (gnuplot)\n"
    "\n"
    "Every epsilon reported as a guarantee is a proven upper bound (certified MPFR path).\n"
    "Exit status: 0 success, 2 bad input, 1 other failure.\n";

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0
        || strcmp(argv[1], "help") == 0) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        puts("dpzo " DPZO_VERSION);
        return 0;
    }
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } cmds[] = {{"epsilon", cmd_epsilon},     {"delta", cmd_delta}, {"rdp", cmd_rdp},
                {"calibrate", cmd_calibrate}, {"demo", cmd_demo},
                {"profile", cmd_profile},     {"lmo", cmd_lmo},
                {"train", cmd_train},
                {"audit", cmd_audit},         {"plot", cmd_plot}};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++)
        if (strcmp(argv[1], cmds[i].name) == 0)
            return cmds[i].run(argc - 2, argv + 2);
    const char *names[sizeof cmds / sizeof *cmds + 1] = {NULL};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++)
        names[i] = cmds[i].name;
    return cli_unknown_word("command", argv[1], names, "try dpzo --help");
}
