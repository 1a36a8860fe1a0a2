// SPDX-License-Identifier: GPL-2.0
/*
 * dmsc-agent: the control-plane daemon of a node. It reads its roles
 * from the configuration; as a service router (sr) it checks the kernel
 * module and reports the module's events. The other roles (srd, smo,
 * aam) grow here as their issues land.
 *
 * Under systemd (Type=notify) it says READY=1 once its roles are running:
 * for sr, once it has joined the events group, so that no event after
 * "systemctl start" returns is missed. Outside systemd sd_notify() does
 * nothing. SIGTERM ends it (the default action: it holds no state).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <linux/dmsc.h>
#include <systemd/sd-daemon.h>

#include "config.h"
#include "nl.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: dmsc-agent -c CONFIG.json [--check]\n"
		   "  --check  validate the configuration and exit\n");
}

static void logmsg(const char *fmt, const char *a, const char *b)
{
	char ts[32];
	time_t now = time(NULL);

	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	printf("%s dmsc-agent: ", ts);
	printf(fmt, a, b);
	printf("\n");
	fflush(stdout);
}

static int on_event(struct nlattr **tb, void *arg)
{
	char ev[16], tun[16] = "?";

	(void)arg;
	if (!tb[DMSC_A_EVENT])
		return 0;
	snprintf(ev, sizeof(ev), "%u", nla_get_u32(tb[DMSC_A_EVENT]));
	if (tb[DMSC_A_TUNNEL]) {
		struct nlattr *t[DMSC_TUNNEL_A_MAX + 1];

		if (!nla_parse_nested(t, DMSC_TUNNEL_A_MAX, tb[DMSC_A_TUNNEL],
				      NULL) && t[DMSC_TUNNEL_A_ID])
			snprintf(tun, sizeof(tun), "%u",
				 nla_get_u32(t[DMSC_TUNNEL_A_ID]));
	}
	logmsg("event %s tunnel %s", ev, tun);
	return 0;
}

static int run_sr(void)
{
	struct dmsc_nl nl;
	int err;

	err = dmsc_nl_open(&nl);
	if (err) {
		dmsc_nl_perror(&nl, "sr", err);
		return 1;
	}
	err = dmsc_nl_join_events(&nl);
	if (err) {
		fprintf(stderr, "dmsc-agent: sr: joining the events group failed: %s\n",
			strerror(-err));
		dmsc_nl_close(&nl);
		return 1;
	}
	logmsg("sr: connected to the kernel family %s%s", DMSC_GENL_NAME, "");
	sd_notify(0, "READY=1\nSTATUS=sr: logging the events of the dmsc module");
	err = dmsc_nl_listen(&nl, DMSC_CMD_EVENT, on_event, NULL);
	dmsc_nl_close(&nl);
	if (err) {
		fprintf(stderr, "dmsc-agent: sr: listening failed: %s\n",
			strerror(-err));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *path = NULL;
	struct agent_config cfg;
	bool check = false;
	char err[256];
	int c;

	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 'k':
			check = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!path || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (config_load(path, &cfg, err, sizeof(err))) {
		fprintf(stderr, "dmsc-agent: %s: %s\n", path, err);
		return 1;
	}
	if (check) {
		printf("%s: ok\n", path);
		return 0;
	}
	signal(SIGPIPE, SIG_IGN);
	logmsg("node %s starting%s", cfg.node, "");
	if (cfg.roles & ROLE_SR)
		return run_sr();
	logmsg("no role of this node is implemented yet%s%s", "", "");
	/* Started and done: without READY=1 systemd would call the exit a
	 * protocol failure.
	 */
	sd_notify(0, "READY=1\nSTATUS=no role of this node is implemented yet");
	return 0;
}
