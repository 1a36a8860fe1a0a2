// SPDX-License-Identifier: GPL-2.0
/*
 * The sr role, a node's agent:
 *  - the dmsc module's events, logged, and the RoCEv2 telemetry
 *    (sr_telemetry.c), unless sr.kernel is false;
 *  - a mutual-TLS connection to an SRD of sr.srd, the next one after a
 *    failure, with a backoff from 100 ms doubling to 5 s;
 *  - the routes the SRD advertises (type 2), applied once each by
 *    revision: an incremental message whose "prev" is not this SR's
 *    revision means one was missed, and the SR asks for the full table;
 *    every sr.digest_interval_ms it sends the SRD the digest of its
 *    table, which answers with the full table only if it differs;
 *  - the instances of this node that local clients register through the
 *    control socket: registered with the SRD (type 1) with a lease of
 *    3 heartbeats, renewed every heartbeat, registered again after a
 *    reconnection, and kept in sr.state (written atomically) so that a
 *    restarted agent registers them again;
 *  - the policies the SMO pushes (type 6, over the same connection when
 *    the SRD's agent runs the smo role too): tunnels and rules this SR
 *    programs into its kernel and reconciles (sr_policy.c), on record in
 *    sr.state;
 *  - with sr.rsvp, the RSVP-CBFC speaker (sr_rsvp.c): the hop-by-hop
 *    set-up and teardown of credit sessions, on this loop;
 *  - every sr.node_report_ms, its node's state (type 4, msg_node.h): load,
 *    links and this node's instances, with the round trip of each one's
 *    last registration to its route's advertisement, to the controller's
 *    smo over the same connection;
 *  - service access tokens (type 3, sr_token.c): asked of the AAM for
 *    the control socket, and checked offline against a service prefix.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/dmsc.h>
#include <systemd/sd-daemon.h>

#include "agent.h"
#include "json_strict.h"
#include "log.h"
#include "msg_auth.h"
#include "msg_node.h"
#include "msg_policy.h"
#include "msg_reg.h"
#include "nl.h"
#include "route_table.h"
#include "sr_policy.h"
#include "sr_probe.h"
#include "sr_rsvp.h"
#include "sr_token.h"
#include "sr_telemetry.h"

#define BACKOFF_MIN_MS	100
#define BACKOFF_MAX_MS	5000
#define SR_LOCAL_MAX	1024
/* the kernel checked against the policies: finds a reloaded module */
#define RECONCILE_MS	2000

struct sr_role {
	struct agent *a;
	/* the kernel */
	struct dmsc_nl nl;
	int nl_open;
	struct dmsc_nl_listener ls;
	struct event *nl_ev, *tm_ev;
	struct sr_telemetry *tm;
	/* the SRD */
	struct conn *c;
	int up;
	size_t srd;			/* index in cfg.sr.srd */
	unsigned int backoff_ms;
	struct event *retry_ev, *hb_ev, *dg_ev;
	uint64_t connects;
	/* routes (type 2) */
	struct route_table rt;
	/* this node's instances */
	struct msg_instance local[SR_LOCAL_MAX];
	int64_t local_sent[SR_LOCAL_MAX];	/* its last registration */
	bool local_wait[SR_LOCAL_MAX];		/* ... whose route has not come */
	int64_t local_rtt[SR_LOCAL_MAX];	/* the last round trip, or -1 */
	uint8_t local_tries[SR_LOCAL_MAX];	/* registrations not yet seen back */
	uint64_t reregistered;			/* by reassert_local() */
	int64_t rereg_since;			/* ... this heartbeat's, from */
	unsigned int rereg_now;			/* ... how many */
	size_t rereg_next;			/* where the cap stopped */
	size_t nlocal;
	/* node state reports (type 4) */
	struct event *nr_ev;
	uint64_t node_seq, node_queued, node_dropped;
	bool node_down_said;
	/* policies (type 6) */
	struct sr_policy *pol;
	struct event *rec_ev;
	/* RSVP-CBFC (sr.rsvp) */
	struct sr_rsvp *rsvp;
	bool no_speaker_said;		/* credit flows without sr.rsvp */
	/* service access tokens (type 3) */
	struct sr_token *tok;
	struct sr_probe *probe;		/* ICMPv6 echoes to its instances, or NULL */
};

/* --- the kernel ---------------------------------------------------------- */

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

static void on_nl(evutil_socket_t fd, short what, void *arg)
{
	struct sr_role *r = arg;
	int err;

	(void)fd;
	(void)what;
	err = dmsc_nl_listen_recv(&r->nl, &r->ls);
	/*
	 * The socket overran (a link down fails many sessions at once):
	 * events were lost, which this role only logs. The agent goes on;
	 * the speaker, which acts on them, reads the tunnels again itself.
	 */
	if (err == -ENOBUFS) {
		agent_log("sr: kernel events lost (the socket overran)");
		return;
	}
	if (err < 0) {
		agent_log("sr: listening failed: %s", strerror(-err));
		event_base_loopbreak(r->a->base);
	}
}

static void on_tm(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sr_telemetry_tick(((struct sr_role *)arg)->tm);
}

/* report_to "smo": the reports go to the controller this SR talks to. */
static int tm_send(void *arg, const char *frame, size_t len, const char **why)
{
	struct sr_role *r = arg;

	if (!r->up) {
		*why = "no connection to the controller";
		return -1;
	}
	/* The srd of a controller without the smo would refuse each one. */
	if (!(conn_peer(r->c)->roles & ROLE_SMO)) {
		*why = "the controller runs no smo role";
		return -1;
	}
	if (conn_pending(r->c) > SR_TELEMETRY_BACKLOG) {
		*why = "the controller is not reading";
		return -1;
	}
	if (conn_send(r->c, frame + MSG_HDR_LEN, len - MSG_HDR_LEN)) {
		*why = "cannot queue it";
		return -1;
	}
	return 0;
}

static int kernel_start(struct sr_role *r)
{
	struct agent *a = r->a;
	int err;

	r->ls = (struct dmsc_nl_listener){ DMSC_CMD_EVENT, on_event, NULL, 0 };
	err = dmsc_nl_open(&r->nl);
	if (err) {
		dmsc_nl_perror(&r->nl, "sr", err);
		return -1;
	}
	r->nl_open = 1;
	err = dmsc_nl_listen_start(&r->nl, &r->ls);
	if (err) {
		agent_log("sr: joining the events group failed: %s", strerror(-err));
		return -1;
	}
	r->nl_ev = event_new(a->base, nl_socket_get_fd(r->nl.sk),
			     EV_READ | EV_PERSIST, on_nl, r);
	if (!r->nl_ev || event_add(r->nl_ev, NULL))
		return -1;
	agent_log("sr: connected to the kernel family %s", DMSC_GENL_NAME);
	if (a->cfg.telemetry.enabled) {
		r->tm = sr_telemetry_start(&a->cfg.telemetry, a->cfg.node,
					   tm_send, r);
		if (!r->tm)
			return -1;
		r->tm_ev = event_new(a->base, sr_telemetry_fd(r->tm),
				     EV_READ | EV_PERSIST, on_tm, r);
		if (!r->tm_ev || event_add(r->tm_ev, NULL))
			return -1;
	}
	return 0;
}

/* --- routes ----------------------------------------------------------- */

static void send_register(struct sr_role *r, const struct msg_instance *i);

/*
 * SR_RETRY_SHIFT_MAX: a registration not seen back is sent again after a
 * heartbeat, then 2, 4, ... up to 64 heartbeats (25.6 s at 400 ms).
 */
#define SR_RETRY_SHIFT_MAX	6
/* At most this many registrations sent again per heartbeat. */
#define SR_REREG_BURST		64

/*
 * An instance of this node that the table lacks. If its route had come
 * back since its last registration, the SRD expired it while this agent
 * lived (a renewal late behind a busy SRD, a partition shorter than the
 * reconnection): register it again at once. If not, the registration is
 * still on its way, or was lost (to an etcd member that died with it):
 * send it again, but only after 1, 2, 4, ... heartbeats. Without that
 * back-off an SRD slower than a heartbeat per registration (999 durable
 * commits queued, under ASan) got every waiting one again at each table:
 * 27,462 registrations for 999 instances in 30 s, each a commit that made
 * the queue longer. And an SRD that far behind expires the instances whose
 * renewals wait unread behind the registrations: those are registered
 * again at once, but at most SR_REREG_BURST a heartbeat, the rest at the
 * next table or digest, so that the cure does not feed the lag.
 */
static void reassert_local(struct sr_role *r)
{
	int64_t now = agent_now_ms(), hb = (int64_t)r->a->cfg.sr.heartbeat_ms;

	/* from where the cap stopped the last time: none waits for ever */
	for (size_t k = 0; k < r->nlocal; k++) {
		size_t i = (r->rereg_next + k) % r->nlocal;
		int64_t wait = r->local_wait[i] ? hb << r->local_tries[i] : hb;

		if (route_table_find(&r->rt, r->local[i].id) ||
		    now - r->local_sent[i] <= wait)
			continue;
		if (now - r->rereg_since >= hb) {
			r->rereg_since = now;
			r->rereg_now = 0;
		}
		if (r->rereg_now++ >= SR_REREG_BURST) {
			r->rereg_next = i;
			break;
		}
		if (!r->local_wait[i])
			agent_log("sr: %s of this node is not in the SRD's table: registering it again",
				  r->local[i].id);
		else if (r->local_tries[i] < SR_RETRY_SHIFT_MAX)
			r->local_tries[i]++;
		r->reregistered++;
		send_register(r, &r->local[i]);
	}
}

/*
 * The round trip of a registration: from this SR's last registration of a
 * local instance to the first advertisement since that carries it back.
 */
static void registration_rtt(struct sr_role *r, const struct msg_routes *m)
{
	int64_t now = agent_now_ms();

	for (size_t i = 0; i < r->nlocal; i++) {
		if (!r->local_wait[i])
			continue;
		for (size_t j = 0; j < m->nroutes; j++)
			if (!strcmp(m->routes[j].id, r->local[i].id)) {
				r->local_rtt[i] = now - r->local_sent[i];
				r->local_wait[i] = false;
				r->local_tries[i] = 0;
				break;
			}
	}
}

static void routes_apply(struct sr_role *r, const struct msg_routes *m)
{
	registration_rtt(r, m);
	switch (route_table_apply(&r->rt, m)) {
	case ROUTES_FULL:
		reassert_local(r);
		break;
	case ROUTES_INCREMENT:
		if (m->nwithdrawn)
			reassert_local(r);
		break;
	default:
		break;
	}
}

/* --- this node's instances ---------------------------------------------- */

/* Write the state file whole or not at all: a temporary, fsync, rename. */
static void state_save(struct sr_role *r)
{
	const char *path = r->a->cfg.sr.state;
	struct json_object *o, *arr;
	char tmp[CONFIG_PATH_MAX + 8];
	const char *text;
	int fd, ok;

	if (!*path)
		return;
	o = json_object_new_object();
	arr = json_object_new_array();
	for (size_t i = 0; i < r->nlocal; i++)
		json_object_array_add(arr, msg_instance_json(&r->local[i]));
	json_object_object_add(o, "instances", arr);
	json_object_object_add(o, "policies", sr_policy_state(r->pol));
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text) &&
	     !fsync(fd);
	if (fd >= 0)
		close(fd);
	if (!ok || rename(tmp, path))
		agent_log("sr: state %s: %s", path, strerror(errno));
	json_object_put(o);
}

static int state_load(struct sr_role *r)
{
	const char *path = r->a->cfg.sr.state;
	struct json_object *o, *arr, *v0;
	char err[256];
	static char buf[1 << 22];
	ssize_t n;
	int fd;

	if (!*path)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0 || n == sizeof(buf)) {
		agent_log("sr: state %s: unreadable or too long", path);
		return -1;
	}
	o = json_strict_parse(buf, (size_t)n, &JSON_STRICT_WIRE, err, sizeof(err));
	if (!o || !json_object_object_get_ex(o, "instances", &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		agent_log("sr: state %s: %s", path, o ? "no instances array" : err);
		json_object_put(o);
		return -1;
	}
	if (json_object_object_get_ex(o, "policies", &v0) &&
	    sr_policy_load(r->pol, v0)) {
		json_object_put(o);
		return -1;
	}
	for (size_t i = 0; i < json_object_array_length(arr) && r->nlocal < SR_LOCAL_MAX; i++) {
		struct json_object *x = json_object_array_get_idx(arr, i), *v;
		struct msg_instance *m = &r->local[r->nlocal];
		const char *k[] = { "id", "node", "sid", "prefix", "rtype", "state" };
		char *d[] = { m->id, m->node, m->sid, m->prefix, m->rtype, m->state };
		size_t sz[] = { sizeof(m->id), sizeof(m->node), sizeof(m->sid),
				sizeof(m->prefix), sizeof(m->rtype), sizeof(m->state) };

		memset(m, 0, sizeof(*m));
		for (size_t j = 0; j < 6; j++)
			if (json_object_object_get_ex(x, k[j], &v))
				snprintf(d[j], sz[j], "%s", json_object_get_string(v));
		if (json_object_object_get_ex(x, "capability", &v))
			m->capability = (uint32_t)json_object_get_int64(v);
		m->ttl_ms = 3 * r->a->cfg.sr.heartbeat_ms;
		r->local_rtt[r->nlocal] = -1;
		if (m->id[0])
			r->nlocal++;
	}
	json_object_put(o);
	agent_log("sr: %zu instances of this node from %s", r->nlocal, path);
	return 0;
}

static void send_register(struct sr_role *r, const struct msg_instance *i)
{
	struct msg_reg g = { .op = REG_REGISTER, .inst = *i };

	r->local_sent[i - r->local] = agent_now_ms();
	r->local_wait[i - r->local] = r->up;
	if (r->up)
		agent_msg_send(r->a, r->c, &msg_reg_type, &g);
}

int sr_role_register(struct sr_role *r, const struct msg_instance *i,
		     char *err, size_t errlen)
{
	struct msg_instance m = *i;
	size_t k;

	if (strcmp(i->node, r->a->cfg.node)) {
		snprintf(err, errlen, "node: %s is not this node (%s)", i->node,
			 r->a->cfg.node);
		return -1;
	}
	m.ttl_ms = 3 * r->a->cfg.sr.heartbeat_ms;
	for (k = 0; k < r->nlocal && strcmp(r->local[k].id, i->id); k++)
		;
	if (k == SR_LOCAL_MAX) {
		snprintf(err, errlen, "more than %d instances on this node",
			 SR_LOCAL_MAX);
		return -1;
	}
	r->local[k] = m;
	if (k == r->nlocal) {
		r->local_rtt[k] = -1;
		r->nlocal++;
	}
	r->local_tries[k] = 0;
	state_save(r);
	send_register(r, &r->local[k]);
	return 0;
}

int sr_role_deregister(struct sr_role *r, const char *id, char *err,
		       size_t errlen)
{
	struct msg_reg g = { .op = REG_DEREGISTER };
	size_t k;

	for (k = 0; k < r->nlocal && strcmp(r->local[k].id, id); k++)
		;
	if (k == r->nlocal) {
		snprintf(err, errlen, "id: %s is no instance of this node", id);
		return -1;
	}
	r->nlocal--;
	r->local[k] = r->local[r->nlocal];
	r->local_sent[k] = r->local_sent[r->nlocal];
	r->local_wait[k] = r->local_wait[r->nlocal];
	r->local_rtt[k] = r->local_rtt[r->nlocal];
	r->local_tries[k] = r->local_tries[r->nlocal];
	state_save(r);
	snprintf(g.id, sizeof(g.id), "%s", id);
	if (r->up)
		agent_msg_send(r->a, r->c, &msg_reg_type, &g);
	return 0;
}

/* Anti-entropy: the digest of this SR's table at its revision. */
static void on_digest(evutil_socket_t fd, short what, void *arg)
{
	struct sr_role *r = arg;

	(void)fd;
	(void)what;
	/* before its first table, or with one asked for, there is nothing to check */
	if (!r->up || !r->rt.synced || r->rt.sync_asked)
		return;
	/*
	 * A registration the SRD could not store (its store failed) shows
	 * as an instance of this node missing from the table: the periodic
	 * full table used to bring it up, a matching digest does not.
	 */
	reassert_local(r);
	route_table_send_digest(&r->rt);
}

#ifdef DMSC_TEST_HOOKS
/* test_roles: a route lost behind the SRD's back, for the digest to find. */
int sr_role_test_drop_route(struct sr_role *r, const char *id)
{
	if (!route_table_find(&r->rt, id))
		return -1;
	route_table_del(&r->rt, id);
	agent_log("sr: test hook: route %s dropped", id);
	return 0;
}
#endif

static void on_heartbeat(evutil_socket_t fd, short what, void *arg)
{
	struct sr_role *r = arg;
	struct msg_reg g = { .op = REG_RENEW };

	(void)fd;
	(void)what;
	if (!r->up)
		return;
	for (size_t i = 0; i < r->nlocal; i++) {
		snprintf(g.id, sizeof(g.id), "%s", r->local[i].id);
		agent_msg_send(r->a, r->c, &msg_reg_type, &g);
	}
}

/* --- node state reports (type 4) --------------------------------------- */

/*
 * Every sr.node_report_ms: this node's state to the controller's smo.
 * Numbered from 1 per report made, sent or not, as type 5 is, so the smo
 * counts the ones it missed; dropped while there is no connection, the
 * controller runs no smo, or it is not reading (tm_send()).
 */
static void on_node_report(evutil_socket_t fd, short what, void *arg)
{
	struct sr_role *r = arg;
	struct node_state s = { 0 };
	struct msg m = { .type = &msg_node_type, .body = &s };
	char err[256], *frame = NULL;
	const char *why = "";
	size_t len;

	(void)fd;
	(void)what;
	if (node_state_read_host(&s, err, sizeof(err))) {
		agent_log("sr: node state: %s: no report", err);
		return;
	}
	s.insts = calloc(r->nlocal + 1, sizeof(*s.insts));
	if (!s.insts) {
		node_state_free(&s);
		return;
	}
	for (size_t i = 0; i < r->nlocal; i++) {
		struct node_inst *n = &s.insts[s.ninsts++];

		snprintf(n->id, sizeof(n->id), "%s", r->local[i].id);
		snprintf(n->state, sizeof(n->state), "%s", r->local[i].state);
		n->has_rtt = r->local_rtt[i] >= 0;
		n->registration_rtt_ms = n->has_rtt ? (uint64_t)r->local_rtt[i] : 0;
		if (n->registration_rtt_ms > 3600000)
			n->registration_rtt_ms = 3600000;
		sr_probe_fill(r->probe, n->id, n);
	}
	snprintf(m.node, sizeof(m.node), "%s", r->a->cfg.node);
	m.seq = ++r->node_seq;
	if (msg_encode(&m, &frame, &len, err, sizeof(err))) {
		agent_log("sr: node state report %llu: %s",
			  (unsigned long long)m.seq, err);
		r->node_dropped++;
	} else if (tm_send(r, frame, len, &why)) {
		if (!r->node_down_said)
			agent_log("sr: node state report: %s (reports are dropped until it is)",
				  why);
		r->node_down_said = true;
		r->node_dropped++;
	} else {
		if (r->node_down_said)
			agent_log("sr: node state reports reach the smo again");
		r->node_down_said = false;
		r->node_queued++;
	}
	free(frame);
	node_state_free(&s);
	/* the next period's echoes: their answers go into the next report */
	sr_probe_round(r->probe, r->local, r->nlocal);
}

/* --- the SRD connection ---------------------------------------------- */

static void connect_srd(struct sr_role *r);

static void retry_later(struct sr_role *r)
{
	struct timeval tv = { r->backoff_ms / 1000, r->backoff_ms % 1000 * 1000 };

	event_add(r->retry_ev, &tv);
	r->backoff_ms = r->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS :
							      r->backoff_ms * 2;
}

static int on_up(struct conn *c, void *arg)
{
	struct sr_role *r = arg;

	r->up = 1;
	r->connects++;
	r->backoff_ms = BACKOFF_MIN_MS;
	route_table_conn_up(&r->rt, c);
	agent_log("sr: connected to srd %s", conn_peer(c)->node);
	/* the SRD may have lost them while we were away */
	for (size_t i = 0; i < r->nlocal; i++)
		send_register(r, &r->local[i]);
	return 0;
}

/*
 * The credit flows of the policies to the speaker (sr_rsvp.c), which
 * sets up, tears down and retries; without one (no sr.rsvp), said once
 * until the policies have no credit flows again.
 */
static void credit_sync(struct sr_role *r)
{
	const struct policy *p;
	size_t n, i;

	p = sr_policy_desired(r->pol, &n);
	if (r->rsvp) {
		sr_rsvp_want(r->rsvp, p, n);
		return;
	}
	for (i = 0; i < n && !p[i].ncredit; i++)
		;
	if (i < n && !r->no_speaker_said)
		agent_log("sr: policy %s has credit flows, but this node runs no RSVP-CBFC speaker (sr.rsvp): not set up",
			  p[i].name);
	r->no_speaker_said = i < n;
}

static int on_frame(struct conn *c, const unsigned char *p, size_t len,
		    void *arg)
{
	struct sr_role *r = arg;
	struct msg m;

	if (agent_msg_accept(r->a, c, p, len, MSG_BIT(MSG_ROUTES) | MSG_BIT(MSG_POLICY) |
			     MSG_BIT(MSG_AUTH), &m))
		return 0;
	if (m.type->type == MSG_AUTH) {
		sr_token_frame(r->tok, c, &m);
	} else if (m.type->type == MSG_ROUTES) {
		routes_apply(r, m.body);
	} else {
		const struct msg_policy *mp = m.body;
		size_t i;

		/* the SMO speaks for this node's kernel only */
		for (i = 0; i < mp->n && !strcmp(mp->p[i].node, r->a->cfg.node); i++)
			;
		if (i < mp->n) {
			char why[200];

			snprintf(why, sizeof(why), "policy %s is for node %s, not this one",
				 mp->p[i].name, mp->p[i].node);
			reject_note(&r->a->rej, "node", conn_peer(c)->node, why);
		} else {
			sr_policy_push(r->pol, mp);
			credit_sync(r);
		}
	}
	msg_free(&m);
	return 0;
}

static void on_down(struct conn *c, const char *why, void *arg)
{
	struct sr_role *r = arg;

	agent_conn_down(r->a, c, r->up, "sr", why);
	sr_token_conn_down(r->tok);
	r->c = NULL;
	r->up = 0;
	route_table_conn_down(&r->rt);
	/* the next SRD, if there are several */
	r->srd = (r->srd + 1) % r->a->cfg.sr.nsrd;
	retry_later(r);
}

static const struct conn_ops sr_conn_ops = { on_up, on_frame, on_down };

static void connect_srd(struct sr_role *r)
{
	const typeof(r->a->cfg.sr.srd[0]) *s = &r->a->cfg.sr.srd[r->srd];
	struct sockaddr_storage sa;
	socklen_t len;

	config_addr_parse(s->address, &sa, &len);
	r->c = conn_new(r->a->base, r->a->tls_client, 0, -1,
			(struct sockaddr *)&sa, (int)len, s->node, 0,
			&sr_conn_ops, r);
	if (!r->c) {
		agent_log("sr: cannot connect to srd %s at %s", s->node, s->address);
		r->srd = (r->srd + 1) % r->a->cfg.sr.nsrd;
		retry_later(r);
	}
}

static void on_reconcile(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sr_policy_reconcile(((struct sr_role *)arg)->pol);
}

static void save_cb(void *arg)
{
	state_save(arg);
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	connect_srd(arg);
}

/* --- the role ------------------------------------------------------------ */

struct sr_role *sr_role_start(struct agent *a)
{
	struct timeval hb = { a->cfg.sr.heartbeat_ms / 1000,
			      a->cfg.sr.heartbeat_ms % 1000 * 1000 };
	struct sr_role *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->a = a;
	r->backoff_ms = BACKOFF_MIN_MS;
	r->pol = sr_policy_new(a->cfg.sr.kernel, save_cb, r);
	r->tok = sr_token_new(a);
	if (!r->pol || !r->tok)
		goto fail;
	if (a->cfg.sr.kernel && kernel_start(r))
		goto fail;
	if (state_load(r))
		goto fail;
	if (a->cfg.sr.rsvp.enabled &&
	    !(r->rsvp = sr_rsvp_start(a->base, &a->cfg.sr.rsvp, a->cfg.sr.kernel)))
		goto fail;
	/* after a restart: the policies' credit flows signalled again */
	credit_sync(r);
	if (a->cfg.sr.kernel) {
		struct timeval rt = { RECONCILE_MS / 1000, RECONCILE_MS % 1000 * 1000 };

		/* after a restart: the kernel against the state file, now */
		sr_policy_reconcile(r->pol);
		r->rec_ev = event_new(a->base, -1, EV_PERSIST, on_reconcile, r);
		if (!r->rec_ev || event_add(r->rec_ev, &rt))
			goto fail;
	}
	if (a->cfg.sr.nsrd) {
		r->retry_ev = evtimer_new(a->base, on_retry, r);
		r->hb_ev = event_new(a->base, -1, EV_PERSIST, on_heartbeat, r);
		if (!r->retry_ev || !r->hb_ev ||
		    route_table_init(&r->rt, a, "sr", a->cfg.sr.digest_interval_ms))
			goto fail;
		event_add(r->hb_ev, &hb);
		if (a->cfg.sr.digest_interval_ms) {
			unsigned int ms = a->cfg.sr.digest_interval_ms;
			struct timeval dg = { ms / 1000, ms % 1000 * 1000 };

			r->dg_ev = event_new(a->base, -1, EV_PERSIST, on_digest, r);
			if (!r->dg_ev || event_add(r->dg_ev, &dg))
				goto fail;
		}
		if (a->cfg.sr.node_report_ms) {
			unsigned int ms = a->cfg.sr.node_report_ms;
			struct timeval nr = { ms / 1000, ms % 1000 * 1000 };

			r->nr_ev = event_new(a->base, -1, EV_PERSIST, on_node_report, r);
			if (!r->nr_ev || event_add(r->nr_ev, &nr))
				goto fail;
			/* none without the raw socket: reports go without it */
			if (a->cfg.sr.probe)
				r->probe = sr_probe_new(a);
		}
		connect_srd(r);
	}
	return r;
fail:
	sr_role_stop(r);
	return NULL;
}

int sr_role_token(struct sr_role *r, struct json_object *req,
		  struct ctl_req *q, char *err, size_t errlen)
{
	return sr_token_request(r->tok, r->up ? r->c : NULL, req, q, err, errlen);
}

struct json_object *sr_role_access(struct sr_role *r, struct json_object *req,
				   char *err, size_t errlen)
{
	return sr_token_access(r->tok, req, err, errlen);
}

int sr_role_has_telemetry(const struct sr_role *r);
int sr_role_has_telemetry(const struct sr_role *r)
{
	return r->tm != NULL;
}

void sr_role_stop(struct sr_role *r)
{
	if (!r)
		return;
	sr_token_free(r->tok);
	if (r->c)
		conn_close(r->c);
	if (r->retry_ev)
		event_free(r->retry_ev);
	if (r->hb_ev)
		event_free(r->hb_ev);
	if (r->dg_ev)
		event_free(r->dg_ev);
	if (r->nr_ev)
		event_free(r->nr_ev);
	sr_probe_free(r->probe);
	if (r->rec_ev)
		event_free(r->rec_ev);
	/* Its own netlink socket deletes the sessions it made. */
	sr_rsvp_stop(r->rsvp);
	sr_policy_free(r->pol);
	if (r->tm_ev)
		event_free(r->tm_ev);
	sr_telemetry_stop(r->tm);
	if (r->nl_ev)
		event_free(r->nl_ev);
	if (r->nl_open)
		dmsc_nl_close(&r->nl);
	route_table_free(&r->rt);
	free(r);
}

struct json_object *sr_role_show(struct sr_role *r, const char *what)
{
	struct json_object *o = json_object_new_object(), *arr;

	if (!strcmp(what, "routes")) {
		route_table_json(&r->rt, o, 1);
		json_object_object_add(o, "reregistered",
				       json_object_new_uint64(r->reregistered));
	} else if (!strcmp(what, "policies")) {
		json_object_put(o);
		return sr_policy_show(r->pol);
	} else if (!strcmp(what, "rsvp")) {
		json_object_put(o);
		if (r->rsvp)
			return sr_rsvp_show(r->rsvp);
		o = json_object_new_object();
		json_object_object_add(o, "enabled", json_object_new_boolean(0));
	} else if (!strcmp(what, "qos")) {
		json_object_put(o);
		if (r->tm)
			return sr_telemetry_show(r->tm);
		o = json_object_new_object();
		json_object_object_add(o, "report_to", json_object_new_string("none"));
	} else if (!strcmp(what, "nodes")) {
		json_object_object_add(o, "interval_ms",
				       json_object_new_uint64(r->a->cfg.sr.node_report_ms));
		json_object_object_add(o, "reports", json_object_new_uint64(r->node_seq));
		json_object_object_add(o, "queued", json_object_new_uint64(r->node_queued));
		json_object_object_add(o, "dropped", json_object_new_uint64(r->node_dropped));
		if (r->probe)
			json_object_object_add(o, "probe", sr_probe_show(r->probe));
	} else if (!strcmp(what, "aam")) {
		json_object_put(o);
		return sr_token_show(r->tok);
	} else if (!strcmp(what, "instances")) {
		arr = json_object_new_array();
		for (size_t i = 0; i < r->nlocal; i++)
			json_object_array_add(arr, msg_instance_json(&r->local[i]));
		json_object_object_add(o, "local", arr);
	} else if (!strcmp(what, "peers")) {
		struct json_object *x = json_object_new_object();

		arr = json_object_new_array();
		if (r->a->cfg.sr.nsrd) {
			json_object_object_add(x, "node", json_object_new_string(
				r->a->cfg.sr.srd[r->srd].node));
			json_object_object_add(x, "address", json_object_new_string(
				r->a->cfg.sr.srd[r->srd].address));
			json_object_object_add(x, "roles", json_object_new_string("srd"));
			json_object_object_add(x, "up", json_object_new_boolean(r->up));
			json_object_object_add(x, "connects", json_object_new_uint64(r->connects));
			json_object_array_add(arr, x);
		} else {
			json_object_put(x);
		}
		json_object_object_add(o, "srd", arr);
	}
	return o;
}
