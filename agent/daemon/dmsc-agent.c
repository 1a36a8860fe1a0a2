// SPDX-License-Identifier: GPL-2.0
/*
 * dmsc-agent: the control-plane daemon of a node. It reads its roles from
 * the configuration and runs them on one libevent loop (agent.h):
 *   sr   the node's agent: the dmsc module's events and telemetry, routes
 *        from the SRD, this node's instances (sr/sr_role.c);
 *   srd  the service registry over mutual TLS (srd/srd_role.c);
 *   aam  its policy table is lib/net/policy.c, which every role applies
 *        to every message it receives; with an "aam" section, the tokens
 *        of type 3, over the srd role's connections (aam/aam_role.c);
 *   smo  the policies pushed to the SRs (smo/smo_role.c), over the srd
 *        role's connections, by the elected leader on etcd;
 *   mg   the gateway: routes from the SRD as an SR keeps them, and an
 *        HTTP entry that checks a client's token and chooses an
 *        instance of the service it asks for (mg/mg_role.c).
 *
 * Under systemd (Type=notify) it says READY=1 once its roles are running:
 * for sr, once it has joined the events group, so that no event after
 * "systemctl start" returns is missed, and its telemetry is attached and
 * served. Outside systemd sd_notify() does nothing.
 *
 * Signals arrive through the loop (evsignal). SIGHUP reloads: the
 * configuration is read again and, if it is valid, the certificates, key
 * and CRL it names are loaded for the connections to come, and the AAM's
 * grants and lifetime_s replace the running ones; a bad one is
 * refused, logged, and the old one kept. Roles and addresses take a
 * restart. On SIGTERM or SIGINT the agent undoes what it did (detaches
 * its telemetry, closes its connections) and then dies of the same
 * signal, so that its exit status is the one systemd expects of a stop
 * (128 + SIGTERM).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "agent.h"
#include "log.h"
#include "tokens.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: dmsc-agent -c CONFIG.json [--check]\n"
		   "  --check  validate the configuration and exit\n");
}

static int stop_sig;

static void on_stop(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	stop_sig = (int)sig;
	event_base_loopbreak(arg);
}

static void on_hup(evutil_socket_t sig, short what, void *arg)
{
	struct agent *a = arg;
	struct agent_config cfg;
	char err[256];

	(void)sig;
	(void)what;
	sd_notify(0, "RELOADING=1");
	if (config_load(a->cfg_path, &cfg, err, sizeof(err))) {
		agent_log("reload refused, keeping the running configuration: %s: %s",
			  a->cfg_path, err);
	} else if (strcmp(cfg.node, a->cfg.node) || cfg.roles != a->cfg.roles) {
		agent_log("reload refused: node or roles changed, which takes a restart");
	} else if (agent_tls_load(a, &cfg)) {
		agent_log("reload refused: the certificates of %s do not load; the old ones stay",
			  a->cfg_path);
	} else {
		/* what a running role reads at each use */
		a->cfg.tls = cfg.tls;
		a->cfg.sr.heartbeat_ms = cfg.sr.heartbeat_ms;
		/* the AAM's check (its key takes a restart) */
		if (a->aam && cfg.aam.set) {
			a->cfg.aam.lifetime_s = cfg.aam.lifetime_s;
			a->cfg.aam.ngrants = cfg.aam.ngrants;
			memcpy(a->cfg.aam.grants, cfg.aam.grants, sizeof(cfg.aam.grants));
		} else if (a->aam) {
			/* taken out to stop issuing: no grants, deny everything */
			a->cfg.aam.ngrants = 0;
			agent_log("aam: the aam section is gone: no grants, every request denied until a restart");
		}
		agent_log("reloaded %s: certificates%s", a->cfg_path,
			  cfg.tls.crl[0] ? " and CRL" : "");
	}
	sd_notify(0, "READY=1");
}

static int run(struct agent *a)
{
	struct event *ev_term, *ev_int, *ev_hup;
	char status[200];
	int ret = 1;

	ev_term = evsignal_new(a->base, SIGTERM, on_stop, a->base);
	ev_int = evsignal_new(a->base, SIGINT, on_stop, a->base);
	ev_hup = evsignal_new(a->base, SIGHUP, on_hup, a);
	if (!ev_term || !ev_int || !ev_hup || event_add(ev_term, NULL) ||
	    event_add(ev_int, NULL) || event_add(ev_hup, NULL)) {
		agent_log("signals: cannot watch them");
		goto out;
	}
	if (agent_tls_load(a, &a->cfg))
		goto out;
	if (agent_tokens_start(a))
		goto out;
	if ((a->cfg.roles & ROLE_SMO) && !(a->smo = smo_role_start(a)))
		goto out;
	if ((a->cfg.roles & ROLE_AAM) && !a->cfg.aam.set)
		agent_log("aam: no aam section: the policy table only, no tokens issued");
	if (a->cfg.aam.set && !(a->aam = aam_role_start(a)))
		goto out;
	if ((a->cfg.roles & ROLE_SRD) && !(a->srd = srd_role_start(a)))
		goto out;
	if ((a->cfg.roles & ROLE_SR) && !(a->sr = sr_role_start(a)))
		goto out;
	if ((a->cfg.roles & ROLE_MG) && !(a->mg = mg_role_start(a)))
		goto out;
	if (a->cfg.control[0] && !(a->ctl = ctl_start(a, a->cfg.control)))
		goto out;
	if (!a->srd && !a->sr && !a->mg) {
		agent_log("nothing to run: no sr, srd or mg role");
		/* Started and done: without READY=1 systemd would call the
		 * exit a protocol failure.
		 */
		sd_notify(0, "READY=1\nSTATUS=nothing to run: no sr, srd or mg role");
		ret = 0;
		goto out;
	}
	snprintf(status, sizeof(status), "READY=1\nSTATUS=%s%s%s%s%s%s", a->srd ? "srd: serving the registry; " : "",
		 a->smo ? "smo: pushing policies; " : "",
		 a->mg ? "mg: serving the gateway; " : "",
		 a->aam ? "aam: issuing tokens; " : "",
		 a->sr ? "sr: logging the events of the dmsc module" : "",
		 a->sr && a->cfg.telemetry.enabled ? ", telemetry attached" : "");
	sd_notify(0, status);
	ret = event_base_dispatch(a->base) < 0;
out:
	ctl_stop(a->ctl);
	mg_role_stop(a->mg);
	sr_role_stop(a->sr);
	srd_role_stop(a->srd);
	smo_role_stop(a->smo);
	aam_role_stop(a->aam);
	agent_tokens_stop(a);
	if (ev_term)
		event_free(ev_term);
	if (ev_int)
		event_free(ev_int);
	if (ev_hup)
		event_free(ev_hup);
	SSL_CTX_free(a->tls_server);
	SSL_CTX_free(a->tls_client);
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
	static struct agent a;
	bool check = false;
	char err[256];
	int c, ret;

	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			a.cfg_path = optarg;
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
	if (!a.cfg_path || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (config_load(a.cfg_path, &a.cfg, err, sizeof(err))) {
		fprintf(stderr, "dmsc-agent: %s: %s\n", a.cfg_path, err);
		return 1;
	}
	if (check) {
		printf("%s: ok\n", a.cfg_path);
		return 0;
	}
	signal(SIGPIPE, SIG_IGN);
	agent_log("node %s starting", a.cfg.node);
	a.base = event_base_new();
	if (!a.base) {
		fprintf(stderr, "dmsc-agent: event_base_new failed\n");
		return 1;
	}
	ret = run(&a);
	event_base_free(a.base);
	if (stop_sig) {
		/* Undone: now die of it, as without a handler. */
		signal(stop_sig, SIG_DFL);
		raise(stop_sig);
	}
	return ret;
}
