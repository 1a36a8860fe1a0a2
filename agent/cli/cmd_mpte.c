// SPDX-License-Identifier: GPL-2.0
/* dmsc mpte: the solver's own command line (agent/mpte/cli.c). */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "mpte/mpte_cli.h"
#include "parse.h"

int cmd_mpte(struct cli *cli, int argc, char **argv)
{
	/* The verbs are checked here so that their errors exit 2 like all. */
	if (argc == 0)
		return usage_error("a command is required");
	if (matches(argv[0], "help")) {
		char *help[] = { "help", NULL };

		return mpte_cli(1, help, cli->json);
	}
	if (strcmp(argv[0], "solve") && strcmp(argv[0], "batch"))
		return usage_error("unknown command \"%s\"", argv[0]);
	return mpte_cli(argc, argv, cli->json);
}
