// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - standalone "mpte-solve" for testing and the benchmark; the
 * official entry is "dmsc mpte".  Usage: mpte-solve [-j] solve ...
 */
#include <string.h>

#include "mpte_cli.h"

int main(int argc, char **argv)
{
	int json = 0;

	argc--;
	argv++;
	if (argc && !strcmp(argv[0], "-j")) {
		json = 1;
		argc--;
		argv++;
	}
	return mpte_cli(argc, argv, json);
}
