// SPDX-License-Identifier: GPL-2.0
/* roce-gen: RoCEv2 traffic generator (send) and counting sink (sink). */
#include <stdio.h>
#include <string.h>

#include "roce_gen.h"

static void usage(void)
{
	fprintf(stderr, "Usage: roce-gen { send | sink } [ OPTIONS ]\n"
			"       roce-gen { send | sink } help\n\n");
	send_usage();
	fprintf(stderr, "\n");
	sink_usage();
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage();
		return 2;
	}
	if (!strcmp(argv[1], "send"))
		return send_main(argc - 2, argv + 2);
	if (!strcmp(argv[1], "sink"))
		return sink_main(argc - 2, argv + 2);
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "--help")) {
		usage();
		return 0;
	}
	die_usage(usage, "unknown mode \"%s\"", argv[1]);
}
