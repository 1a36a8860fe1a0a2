// SPDX-License-Identifier: GPL-2.0
/*
 * The sr role's telemetry: agent/lib/telemetry.c does the attaching,
 * detaching and reading (the same code as dmsc telemetry), telemetry_prom.c
 * the HTTP (as dmsc telemetry serve), telemetry_qos.c and msg_qos.c the
 * report. This file only sequences them and moves the frames.
 *
 * Two transports carry the same frames. report_to "smo": the sr role's
 * mutual-TLS connection to its controller, whose smo role reads them (the
 * AAM's table lets an sr report for its own node only); a report made
 * while that connection is down or to a controller without the smo role,
 * or while SR_TELEMETRY_BACKLOG bytes wait on it, is dropped. report_to an absolute path: a Unix stream
 * socket (a local collector); a frame is written whole or the connection
 * is dropped, since the reader could not find the next frame after a
 * partial one, and the next report connects again. Either way sequence
 * numbers count the reports made, so the reader sees those it missed.
 *
 * Each report carries the dmsc module's tunnel counters too ("tunnels",
 * read with nl_policy.c's dump on a netlink socket of its own): when the
 * module cannot be read, the report goes without them, said once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "msg.h"
#include "msg_qos.h"
#include "nl_policy.h"
#include "sr_telemetry.h"
#include "telemetry.h"
#include "telemetry_qos.h"

static const char *const dirs[] = { "ingress", "egress" };

struct sr_telemetry {
	const struct telemetry_config *cfg;
	const char *node;
	bool owned[CONFIG_TM_MAX_DEVS];	/* attached by this agent */
	struct MHD_Daemon *http;
	int timer;
	int sock;			/* to report_to, or -1 */
	bool sock_down_logged;
	sr_telemetry_send_fn send;	/* report_to "smo" */
	void *send_arg;
	uint64_t seq, queued, dropped;
	struct telemetry_snap prev;
	struct dmsc_nl nl;		/* the tunnels' counters */
	bool nl_open, nl_said;
};

/*
 * A snapshot of every attachment in the namespace, with its time even
 * when there is none (telemetry_snapshot() then leaves the times 0): the
 * report after a time with nothing attached has an interval too.
 */
static int snapshot(struct telemetry_snap *s)
{
	struct timespec ts;

	if (telemetry_snapshot(s, 0))
		return -1;
	if (!s->mono_ns) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		s->mono_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		clock_gettime(CLOCK_REALTIME, &ts);
		s->real_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
	return 0;
}

/* Attached already (by dmsc telemetry, or an agent that was killed)? */
static bool attached(int ifindex, int dir)
{
	struct telemetry_snap s;
	bool yes = false;

	if (telemetry_snapshot(&s, ifindex))
		return false;	/* attach will say what is wrong */
	for (size_t i = 0; i < s.ndevs; i++)
		yes |= (int)s.devs[i].k.dir == dir;
	telemetry_snap_free(&s);
	return yes;
}

static void detach_owned(struct sr_telemetry *t)
{
	for (size_t i = t->cfg->ndevs; i-- > 0;) {
		struct telemetry_req req = {
			.verb = TELEMETRY_DETACH, .dev = t->cfg->devs[i].dev,
			.dir = t->cfg->devs[i].dir,
		};

		if (!t->owned[i])
			continue;
		t->owned[i] = false;
		if (telemetry_run(&req))
			agent_log("telemetry: cannot detach %s %s (above)",
				  req.dev, dirs[req.dir]);
		else
			agent_log("telemetry: detached %s %s", req.dev,
				  dirs[req.dir]);
	}
}

static int attach_all(struct sr_telemetry *t)
{
	for (size_t i = 0; i < t->cfg->ndevs; i++) {
		struct telemetry_req req = {
			.verb = TELEMETRY_ATTACH, .dev = t->cfg->devs[i].dev,
			.dir = t->cfg->devs[i].dir,
		};
		int ifindex = (int)if_nametoindex(req.dev);

		if (ifindex && attached(ifindex, req.dir)) {
			agent_log("telemetry: %s %s is attached already: reading it, leaving it attached",
				  req.dev, dirs[req.dir]);
			continue;
		}
		if (telemetry_run(&req)) {
			agent_log("telemetry: cannot attach %s %s (above)",
				  req.dev, dirs[req.dir]);
			return -1;
		}
		t->owned[i] = true;
		agent_log("telemetry: attached %s %s", req.dev, dirs[req.dir]);
	}
	return 0;
}

struct sr_telemetry *sr_telemetry_start(const struct telemetry_config *cfg,
					const char *node,
					sr_telemetry_send_fn send, void *arg)
{
	struct sr_telemetry *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cfg = cfg;
	t->node = node;
	t->timer = t->sock = -1;
	if (!strcmp(cfg->report_to, CONFIG_REPORT_TO_SMO)) {
		t->send = send;
		t->send_arg = arg;
	}
	if (attach_all(t))
		goto fail;
	if (cfg->prometheus) {
		t->http = telemetry_http_start(cfg->address, (uint16_t)cfg->port);
		if (!t->http)
			goto fail;
	}
	if (cfg->report_to[0]) {
		struct itimerspec its = {
			.it_value.tv_sec = cfg->report_interval_ms / 1000,
			.it_value.tv_nsec = (long)(cfg->report_interval_ms % 1000) * 1000000,
		};

		its.it_interval = its.it_value;
		/* The first report's counters change from here. */
		if (snapshot(&t->prev))
			goto fail;
		if (!dmsc_nl_open(&t->nl))
			t->nl_open = true;
		else
			agent_log("telemetry: no dmsc module to read tunnel counters from: reports go without them");
		t->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (t->timer < 0 || timerfd_settime(t->timer, 0, &its, NULL)) {
			agent_log("telemetry: report timer: %s", strerror(errno));
			goto fail;
		}
		agent_log("telemetry: reporting to %s every %u ms",
			  t->send ? "the smo over the connection to the controller" :
			  cfg->report_to, cfg->report_interval_ms);
	}
	return t;
fail:
	sr_telemetry_stop(t);
	return NULL;
}

int sr_telemetry_fd(const struct sr_telemetry *t)
{
	return t->timer;
}

static void sock_down(struct sr_telemetry *t, const char *what, int err)
{
	if (t->sock >= 0)
		close(t->sock);
	t->sock = -1;
	/* Once until it works again: not a line a second while the SMO is away. */
	if (!t->sock_down_logged)
		agent_log("telemetry: report_to %s: %s: %s (reports are dropped until it accepts)",
			  t->cfg->report_to, what, strerror(err));
	t->sock_down_logged = true;
}

/* To the controller: its connection is the sr role's; 0 if queued. */
static int send_smo(struct sr_telemetry *t, const char *frame, size_t len)
{
	const char *why = "not connected";

	if (!t->send || t->send(t->send_arg, frame, len, &why)) {
		/* Once until it works again, as for the socket. */
		if (!t->sock_down_logged)
			agent_log("telemetry: report to the smo: %s (reports are dropped until it is)",
				  why);
		t->sock_down_logged = true;
		return -1;
	}
	if (t->sock_down_logged)
		agent_log("telemetry: reports reach the smo again");
	t->sock_down_logged = false;
	return 0;
}

static int send_frame(struct sr_telemetry *t, const char *frame, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 1 };
	size_t off = 0;

	if (!strcmp(t->cfg->report_to, CONFIG_REPORT_TO_SMO))
		return send_smo(t, frame, len);
	if (t->sock < 0) {
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", t->cfg->report_to);
		t->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (t->sock < 0) {
			sock_down(t, "socket", errno);
			return -1;
		}
		/* A reader that stops reading costs a report, not the agent. */
		setsockopt(t->sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (connect(t->sock, (struct sockaddr *)&sa, sizeof(sa))) {
			sock_down(t, "connect", errno);
			return -1;
		}
		if (t->sock_down_logged)
			agent_log("telemetry: report_to %s: connected",
				  t->cfg->report_to);
		t->sock_down_logged = false;
	}
	while (off < len) {
		ssize_t n = send(t->sock, frame + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			sock_down(t, "send", n < 0 ? errno : EPIPE);
			return -1;
		}
		off += (size_t)n;
	}
	return 0;
}

/* The module's tunnel counters into @r; without them if it cannot say. */
static void add_tunnels(struct sr_telemetry *t, struct qos_report *r)
{
	int err;

	if (!t->nl_open)
		return;
	err = dmsc_nl_tunnel_counters(&t->nl, &r->tunnels, &r->ntunnels);
	if (err) {
		if (!t->nl_said)
			agent_log("telemetry: tunnel counters: %s (reports go without them until it answers)",
				  strerror(-err));
		t->nl_said = true;
		return;
	}
	t->nl_said = false;
	r->has_tunnels = true;
	if (r->ntunnels > QOS_MAX_TUNNELS) {
		r->tunnels_omitted = r->ntunnels - QOS_MAX_TUNNELS;
		r->ntunnels = QOS_MAX_TUNNELS;
	}
}

void sr_telemetry_tick(struct sr_telemetry *t)
{
	struct telemetry_snap cur;
	struct qos_report r;
	struct msg m = { .type = &msg_qos_type, .body = &r };
	uint64_t expirations;
	char err[256], *frame;
	size_t len;

	if (read(t->timer, &expirations, sizeof(expirations)) < 0)
		return;		/* EAGAIN: nothing due */
	if (snapshot(&cur)) {
		agent_log("telemetry: cannot read the counters (above): no report");
		return;
	}
	if (telemetry_qos_report(&t->prev, &cur, &r)) {
		agent_log("telemetry: out of memory: no report");
		telemetry_snap_free(&cur);
		return;
	}
	telemetry_snap_free(&t->prev);
	t->prev = cur;
	add_tunnels(t, &r);
	snprintf(m.node, sizeof(m.node), "%s", t->node);
	m.seq = ++t->seq;
	if (msg_encode(&m, &frame, &len, err, sizeof(err)))
		agent_log("telemetry: report %llu: %s",
			  (unsigned long long)m.seq, err);
	else if (send_frame(t, frame, len))
		t->dropped++;
	else
		t->queued++;
	free(frame);
	qos_report_free(&r);
}

struct json_object *sr_telemetry_show(const struct sr_telemetry *t)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "report_to", json_object_new_string(
		t->cfg->report_to[0] ? t->cfg->report_to : "none"));
	json_object_object_add(o, "reports", json_object_new_uint64(t->seq));
	json_object_object_add(o, "queued", json_object_new_uint64(t->queued));
	json_object_object_add(o, "dropped", json_object_new_uint64(t->dropped));
	return o;
}

void sr_telemetry_stop(struct sr_telemetry *t)
{
	if (!t)
		return;
	telemetry_http_stop(t->http);
	detach_owned(t);
	if (t->timer >= 0)
		close(t->timer);
	if (t->sock >= 0)
		close(t->sock);
	telemetry_snap_free(&t->prev);
	if (t->nl_open)
		dmsc_nl_close(&t->nl);
	free(t);
}
