/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Option parsing shared by "send" and "sink": errors name the mode and
 * the option, print the mode's usage and exit 2.
 */
#ifndef ROCE_GEN_ARGS_H
#define ROCE_GEN_ARGS_H

#include <stdint.h>

/* Which mode is parsing now: its name for messages, its usage text. */
void args_begin(const char *mode, void (*usage)(void));

void usage_err(const char *fmt, const char *arg) __attribute__((noreturn));
/* The value after option argv[*i], or an error naming the option. */
const char *next_arg(int argc, char **argv, int *i);
/* That value as a number in [min, max], or an error naming the option. */
uint64_t num_arg(int argc, char **argv, int *i, uint64_t min, uint64_t max);

#endif
