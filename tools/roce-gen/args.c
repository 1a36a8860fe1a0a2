// SPDX-License-Identifier: GPL-2.0
/* Option parsing helpers shared by the send and sink modes. */
#include <stdio.h>

#include "addr.h"
#include "args.h"
#include "roce_gen.h"

static const char *cur_mode = "?";
static void (*cur_usage)(void);

void args_begin(const char *mode, void (*usage)(void))
{
	cur_mode = mode;
	cur_usage = usage;
}

void usage_err(const char *fmt, const char *arg)
{
	char msg[256];

	snprintf(msg, sizeof(msg), fmt, arg);
	die_usage(cur_usage, "%s: %s", cur_mode, msg);
}

const char *next_arg(int argc, char **argv, int *i)
{
	if (*i + 1 >= argc)
		usage_err("option \"%s\" needs a value", argv[*i]);
	return argv[++*i];
}

uint64_t num_arg(int argc, char **argv, int *i, uint64_t min, uint64_t max)
{
	const char *opt = argv[*i];
	const char *v = next_arg(argc, argv, i);
	uint64_t n;

	if (!parse_u64(v, min, max, &n)) {
		char msg[160];

		snprintf(msg, sizeof(msg), "bad value \"%s\" for \"%s\" (%llu..%llu)",
			 v, opt, (unsigned long long)min, (unsigned long long)max);
		die_usage(cur_usage, "%s: %s", cur_mode, msg);
	}
	return n;
}
