/* SPDX-License-Identifier: GPL-2.0 */
/*
 * plan_cli.h - the "dmsc plan" command.
 *
 * argv[0] is the verb ("segment" or "help"); json is 1 when dmsc was
 * given -j.  Results go to stdout, errors to stderr naming the field; the
 * return value is the exit code: 0, 1 (bad input, no plan), 2 (usage).
 */
#ifndef PLAN_CLI_H
#define PLAN_CLI_H

int plan_cli(int argc, char **argv, int json);

#endif
