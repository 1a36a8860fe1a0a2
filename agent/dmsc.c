// SPDX-License-Identifier: GPL-2.0
/*
 * dmsc: the command-line tool. Spelling and manners follow iproute2:
 * dmsc [OPTIONS] OBJECT [COMMAND [ARGS]], -j for JSON, -s for statistics,
 * unambiguous prefixes of objects and commands are accepted.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "output.h"
#include "parse.h"
#include "mpte/mpte_cli.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: dmsc [OPTIONS] OBJECT { COMMAND | help }\n"
		"where  OBJECT  := { info | set | tunnel | rule | flow | monitor | mpte }\n"
		"       OPTIONS := { -j[son] | -p[retty] | -s[tatistics] | -V[ersion] }\n");
}

int usage_error(const char *object, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "dmsc: %s: ", object);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see \"dmsc %s help\")\n", object);
	return 2;
}

int cli_nl(struct cli *cli)
{
	int err;

	if (cli->nl_open)
		return 0;
	err = dmsc_nl_open(&cli->nl);
	if (err) {
		dmsc_nl_perror(&cli->nl, "netlink", err);
		return -1;
	}
	cli->nl_open = true;
	return 0;
}

int cli_talk(struct cli *cli, struct nl_msg *msg, dmsc_nl_parse_fn parse,
	     const char *what)
{
	int err = dmsc_nl_talk(&cli->nl, msg, parse, cli);

	if (err) {
		dmsc_nl_perror(&cli->nl, what, err);
		return 1;
	}
	return 0;
}

int cli_show(struct cli *cli, struct nl_msg *msg, dmsc_nl_parse_fn parse,
	     const char *what)
{
	int ret;

	out_open_array(NULL);
	ret = cli_talk(cli, msg, parse, what);
	out_close_array();
	return ret;
}

static int cmd_mpte(struct cli *cli, int argc, char **argv)
{
	return mpte_cli(argc, argv, cli->json);
}

static const struct {
	const char *name;
	int (*fn)(struct cli *cli, int argc, char **argv);
} objects[] = {
	{ "info", cmd_info },
	{ "set", cmd_set },
	{ "tunnel", cmd_tunnel },
	{ "rule", cmd_rule },
	{ "flow", cmd_flow },
	{ "monitor", cmd_monitor },
	{ "mpte", cmd_mpte },
};

int main(int argc, char **argv)
{
	struct cli cli = { 0 };
	bool pretty = false;
	size_t i;
	int ret;

	for (argc--, argv++; argc > 0 && argv[0][0] == '-'; argc--, argv++) {
		const char *opt = argv[0] + 1;

		if (*opt == '-')
			opt++;
		if (matches(opt, "json")) {
			cli.json = true;
		} else if (matches(opt, "pretty")) {
			pretty = true;
		} else if (matches(opt, "statistics")) {
			cli.stats = true;
		} else if (matches(opt, "Version")) {
			printf("dmsc " DMSC_TOOL_VERSION "\n");
			return 0;
		} else if (matches(opt, "help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "dmsc: unknown option \"%s\"\n",
				argv[0]);
			usage(stderr);
			return 2;
		}
	}
	if (argc == 0) {
		usage(stderr);
		return 2;
	}
	if (matches(argv[0], "help")) {
		usage(stdout);
		return 0;
	}
	out_init(cli.json, pretty);
	for (i = 0; i < sizeof(objects) / sizeof(*objects); i++) {
		if (matches(argv[0], objects[i].name)) {
			ret = objects[i].fn(&cli, argc - 1, argv + 1);
			out_flush();
			if (cli.nl_open)
				dmsc_nl_close(&cli.nl);
			return ret;
		}
	}
	fprintf(stderr, "dmsc: unknown object \"%s\"\n", argv[0]);
	usage(stderr);
	return 2;
}
