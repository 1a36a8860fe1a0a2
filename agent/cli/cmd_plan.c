// SPDX-License-Identifier: GPL-2.0
/* dmsc plan: the segmentation planner's command line (agent/plan/cli.c). */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "parse.h"
#include "plan/plan_cli.h"

int cmd_plan(struct cli *cli, int argc, char **argv)
{
	/* The verbs are checked here so that their errors exit 2 like all. */
	if (argc == 0)
		return usage_error("a command is required");
	if (matches(argv[0], "help")) {
		char *help[] = { "help", NULL };

		return plan_cli(1, help, cli->json);
	}
	if (strcmp(argv[0], "segment"))
		return usage_error("unknown command \"%s\"", argv[0]);
	return plan_cli(argc, argv, cli->json);
}
