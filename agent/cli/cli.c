// SPDX-License-Identifier: GPL-2.0
/*
 * The dmsc program: global options, then one command line or a -batch
 * file of them. Spelling and manners follow iproute2: dmsc [OPTIONS]
 * OBJECT [COMMAND [ARGS]], unambiguous prefixes of objects and commands
 * are accepted, -j for JSON, -s for statistics, -n NETNS, -batch FILE.
 *
 * Every command line is parsed whole before anything is sent, and
 * netlink (with the -n namespace) is opened only for the first command
 * that parsed: a typo never depends on the module or the namespace.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <linux/dmsc.h>

#include "cmd.h"
#include "err.h"
#include "netns.h"
#include "output.h"
#include "parse.h"
#include "telemetry.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: dmsc [OPTIONS] OBJECT { COMMAND | help }\n"
		"       dmsc [OPTIONS] -batch FILE\n"
		"       dmsc help\n"
		"where  OBJECT  := { info | set | tunnel | rule | flow | cbfc | monitor | mpte | plan | telemetry | agent }\n"
		"       OPTIONS := { -j[son] | -p[retty] | -s[tatistics] | -n[etns] NETNS |\n"
		"                    -b[atch] FILE | -f[orce] | -V[ersion] | -h[elp] }\n"
		"Exit status: 0 success, 1 the kernel or the operation failed, 2 usage error.\n"
		"See dmsc(8).\n");
}

int usage_error(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err_object())
		errorf("%s (try \"dmsc %s help\")", msg, err_object());
	else
		errorf("%s (try \"dmsc help\")", msg);
	return EXIT_USAGE;
}

static const struct {
	const char *name;
	cmd_parse_fn *parse;
} objects[] = {
	{ "info", cmd_info },
	{ "set", cmd_set },
	{ "tunnel", cmd_tunnel },
	{ "rule", cmd_rule },
	{ "flow", cmd_flow },
	{ "cbfc", cmd_cbfc },
	{ "monitor", cmd_monitor },
};

int cli_parse(struct cli *cli, int argc, char **argv, struct request *req)
{
	size_t i;

	memset(req, 0, sizeof(*req));
	err_set_command(NULL, NULL);
	if (argc == 0)
		return usage_error("an object is required");
	if (matches(argv[0], "help")) {
		usage(stdout);
		return 0;
	}
	for (i = 0; i < sizeof(objects) / sizeof(*objects); i++)
		if (matches(argv[0], objects[i].name))
			return objects[i].parse(cli, argc - 1, argv + 1, req);
	return usage_error("unknown object \"%s\"", argv[0]);
}

/* Enter the -n namespace before the first kernel access. */
static int cli_netns(struct cli *cli)
{
	if (cli->netns) {
		if (netns_enter(cli->netns))
			return -1;
		/* Once in it, stay: every later command runs there too. */
		cli->netns = NULL;
	}
	return 0;
}

/* Open netlink, in the -n namespace, on first use. */
static int cli_nl(struct cli *cli)
{
	int err;

	if (cli->nl_open)
		return 0;
	if (cli_netns(cli))
		return -1;
	err = dmsc_nl_open(&cli->nl);
	if (err) {
		errorf("%s", cli->nl.errmsg[0] ? cli->nl.errmsg :
						 strerror(-err));
		return -1;
	}
	cli->nl_open = true;
	return 0;
}

/* Send what cli_parse() built; print "dmsc: CMD: error: extack". */
static int cli_send(struct cli *cli, struct request *req)
{
	void *arg = req->arg ? req->arg : cli;
	int err;

	if (cli_nl(cli)) {
		nlmsg_free(req->msg);
		return EXIT_FAIL;
	}
	if (req->listen) {
		setvbuf(stdout, NULL, _IOLBF, 0);
		err = dmsc_nl_listen(&cli->nl, DMSC_CMD_EVENT, req->parse, arg);
	} else {
		if (req->array)
			out_open_array(NULL);
		err = dmsc_nl_talk(&cli->nl, req->msg, req->parse, arg);
		if (req->array)
			out_close_array();
	}
	if (err) {
		errorf("%s%s%s", strerror(-err), cli->nl.errmsg[0] ? ": " : "",
		       cli->nl.errmsg);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int cli_run(struct cli *cli, int argc, char **argv)
{
	struct request req;
	int ret;

	/* mpte is a solver: no request, no netlink. */
	if (argc > 0 && matches(argv[0], "mpte")) {
		err_set_command("mpte", NULL);
		ret = cmd_mpte(cli, argc - 1, argv + 1);
		out_flush();
		return ret;
	}
	/* plan is a planner: no request, no netlink either. */
	if (argc > 0 && matches(argv[0], "plan")) {
		err_set_command("plan", NULL);
		ret = cmd_plan(cli, argc - 1, argv + 1);
		out_flush();
		return ret;
	}
	/* agent asks a running dmsc-agent: no netlink. "a" is ambiguous. */
	if (argc > 0 && strlen(argv[0]) >= 2 && matches(argv[0], "agent")) {
		err_set_command("agent", NULL);
		ret = cmd_agent(cli, argc - 1, argv + 1);
		out_flush();
		return ret;
	}
	/* telemetry works through libbpf, not the dmsc family. "t" stays tunnel. */
	if (argc > 0 && strlen(argv[0]) >= 2 && matches(argv[0], "telemetry")) {
		struct telemetry_req treq;

		ret = cmd_telemetry(cli, argc - 1, argv + 1, &treq);
		if (ret || treq.verb == TELEMETRY_HELP)
			return ret;
		if (cli_netns(cli))
			return EXIT_FAIL;
		ret = telemetry_run(&treq);
		out_flush();
		return ret;
	}
	ret = cli_parse(cli, argc, argv, &req);
	if (ret || (!req.msg && !req.listen))
		return ret;
	ret = cli_send(cli, &req);
	out_flush();
	return ret;
}

void cli_close(struct cli *cli)
{
	if (cli->nl_open)
		dmsc_nl_close(&cli->nl);
	cli->nl_open = false;
}

int cli_main(int argc, char **argv)
{
	struct cli cli = { 0 };
	const char *batch = NULL;
	bool force = false;
	int ret;

	err_set_where(NULL);
	err_set_command(NULL, NULL);
	for (argc--, argv++; argc > 0 && argv[0][0] == '-'; argc--, argv++) {
		const char *opt = argv[0] + 1;

		if (*opt == '-')
			opt++;
		if (matches(opt, "json")) {
			cli.json = true;
		} else if (matches(opt, "pretty")) {
			cli.pretty = true;
		} else if (matches(opt, "statistics")) {
			cli.stats = true;
		} else if (matches(opt, "netns")) {
			if (argc < 2)
				return usage_error("%s: needs a namespace name",
						   argv[0]);
			if (netns_check_name(argv[1]))
				return EXIT_USAGE;
			cli.netns = argv[1];
			argc--;
			argv++;
		} else if (matches(opt, "batch")) {
			if (argc < 2)
				return usage_error("%s: needs a file name (- for stdin)",
						   argv[0]);
			batch = argv[1];
			argc--;
			argv++;
		} else if (matches(opt, "force")) {
			force = true;
		} else if (matches(opt, "Version")) {
			printf("dmsc " DMSC_TOOL_VERSION "\n");
			return EXIT_OK;
		} else if (matches(opt, "help")) {
			usage(stdout);
			return EXIT_OK;
		} else {
			return usage_error("unknown option \"%s\"", argv[0]);
		}
	}
	if (batch && argc)
		return usage_error("-batch: unexpected \"%s\" (commands go in the file)",
				   argv[0]);
	if (!batch && !argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	out_init(cli.json, cli.pretty);
	if (batch)
		ret = cli_batch(&cli, batch, force);
	else
		ret = cli_run(&cli, argc, argv);
	cli_close(&cli);
	return ret;
}
