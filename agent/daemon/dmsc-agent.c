// SPDX-License-Identifier: GPL-2.0
/*
 * dmsc-agent: the control-plane daemon of a node. It reads its roles
 * from the configuration; as a service router (sr) it checks the kernel
 * module and reports the module's events. The other roles (srd, smo,
 * aam) grow here as their issues land.
 *
 * Under systemd (Type=notify) it says READY=1 once its roles are running:
 * for sr, once it has joined the events group, so that no event after
 * "systemctl start" returns is missed, and its telemetry is attached and
 * served. Outside systemd sd_notify() does nothing.
 *
 * One poll() loop: the events socket, the telemetry report timer and a
 * signalfd for SIGTERM and SIGINT. On a signal the agent undoes what it
 * did (detaches its telemetry) and then dies of the same signal, so that
 * its exit status is the one systemd expects of a stop (128 + SIGTERM).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <linux/dmsc.h>
#include <systemd/sd-daemon.h>

#include "config.h"
#include "log.h"
#include "nl.h"
#include "sr_telemetry.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: dmsc-agent -c CONFIG.json [--check]\n"
		   "  --check  validate the configuration and exit\n");
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
	agent_log("event %s tunnel %s", ev, tun);
	return 0;
}

/* Wait for a signal, the events socket and the report timer. */
static int loop(int sfd, struct dmsc_nl *nl, struct dmsc_nl_listener *ls,
		struct sr_telemetry *tm, int *sig)
{
	struct signalfd_siginfo si;
	struct pollfd p[3] = {
		{ .fd = sfd, .events = POLLIN },
		{ .fd = nl ? nl_socket_get_fd(nl->sk) : -1, .events = POLLIN },
		{ .fd = tm ? sr_telemetry_fd(tm) : -1, .events = POLLIN },
	};
	int err;

	for (;;) {
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "dmsc-agent: poll: %s\n", strerror(errno));
			return 1;
		}
		if (p[0].revents) {
			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				*sig = (int)si.ssi_signo;
				return 0;
			}
		}
		if (p[1].revents) {
			err = dmsc_nl_listen_recv(nl, ls);
			if (err < 0) {
				fprintf(stderr, "dmsc-agent: sr: listening failed: %s\n",
					strerror(-err));
				return 1;
			}
		}
		if (p[2].revents)
			sr_telemetry_tick(tm);
	}
}

static int run_sr(const struct agent_config *cfg, int sfd, int *sig)
{
	struct dmsc_nl_listener ls = { DMSC_CMD_EVENT, on_event, NULL, 0 };
	struct sr_telemetry *tm = NULL;
	struct dmsc_nl nl;
	int err, ret;

	err = dmsc_nl_open(&nl);
	if (err) {
		dmsc_nl_perror(&nl, "sr", err);
		return 1;
	}
	err = dmsc_nl_listen_start(&nl, &ls);
	if (err) {
		fprintf(stderr, "dmsc-agent: sr: joining the events group failed: %s\n",
			strerror(-err));
		dmsc_nl_close(&nl);
		return 1;
	}
	agent_log("sr: connected to the kernel family %s", DMSC_GENL_NAME);
	if (cfg->telemetry.enabled) {
		tm = sr_telemetry_start(&cfg->telemetry, cfg->node);
		if (!tm) {
			dmsc_nl_close(&nl);
			return 1;
		}
	}
	sd_notify(0, tm ? "READY=1\nSTATUS=sr: logging the events of the dmsc module, telemetry attached" :
			  "READY=1\nSTATUS=sr: logging the events of the dmsc module");
	ret = loop(sfd, &nl, &ls, tm, sig);
	sr_telemetry_stop(tm);
	dmsc_nl_close(&nl);
	return ret;
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
	int c, sfd, sig = 0, ret;
	sigset_t set;

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
	agent_log("node %s starting", cfg.node);
	if (cfg.roles & ROLE_SR) {
		/* Blocked before any thread (libmicrohttpd's) inherits the mask. */
		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		sigaddset(&set, SIGINT);
		sigprocmask(SIG_BLOCK, &set, NULL);
		sfd = signalfd(-1, &set, SFD_CLOEXEC);
		if (sfd < 0) {
			fprintf(stderr, "dmsc-agent: signalfd: %s\n", strerror(errno));
			return 1;
		}
		ret = run_sr(&cfg, sfd, &sig);
		if (sig) {
			/* Undone: now die of it, as without a handler. */
			signal(sig, SIG_DFL);
			sigprocmask(SIG_UNBLOCK, &set, NULL);
			raise(sig);
		}
		return ret;
	}
	agent_log("no role of this node is implemented yet");
	/* Started and done: without READY=1 systemd would call the exit a
	 * protocol failure.
	 */
	sd_notify(0, "READY=1\nSTATUS=no role of this node is implemented yet");
	return 0;
}
