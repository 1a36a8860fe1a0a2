/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpte_cli.h - the "dmsc mpte" command.
 *
 * argv[0] is the verb ("solve", "batch" or "help"); json is 1 when dmsc
 * was given -j.
 * Results go to stdout, errors to stderr naming the bad field; the return
 * value is the process exit code.
 */
#ifndef MPTE_CLI_H
#define MPTE_CLI_H

int mpte_cli(int argc, char **argv, int json);

/* "batch --result R.json --src ADDR --tunnel-id N [--ingress NODE]" */
int mpte_batch(int argc, char **argv);

#endif
