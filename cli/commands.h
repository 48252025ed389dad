/* SPDX-License-Identifier: Apache-2.0 */
/* cli/commands.h: the dpzo subcommands. Each returns the process exit status
 * (docs/cli.md): 0 done; 1 a valid request without an answer (the answer is "no", no value
 * meets the target, a limit, gnuplot missing, out of memory); 2 a request that cannot be
 * carried out as given (usage, a value, an unreadable input, an unwritable output); 130
 * interrupted. Every status but 0 comes with a line on stderr. */
#ifndef DPZO_CLI_COMMANDS_H
#define DPZO_CLI_COMMANDS_H

int cmd_epsilon(int argc, char **argv);
int cmd_delta(int argc, char **argv);
int cmd_rdp(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_lmo(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_plot(int argc, char **argv);

#endif
