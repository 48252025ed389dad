/* SPDX-License-Identifier: Apache-2.0 */
/* cli/commands.h: the dpzo subcommands. Each returns the process exit status:
 * 0 success, 2 bad input (one line on stderr), 1 any other failure. */
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
