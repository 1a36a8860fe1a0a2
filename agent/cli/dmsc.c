// SPDX-License-Identifier: GPL-2.0
/* dmsc: the command-line tool; the program is in cli.c, see dmsc(8). */
#include "cmd.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
