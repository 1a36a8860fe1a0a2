// SPDX-License-Identifier: GPL-2.0
/*
 * The RSVP-CBFC speaker (rsvp_speaker.h): a raw RSVP socket per address
 * family, the control socket and a 50 ms tick for the timers, driven by
 * dmsc-rsvp's poll loop (rsvp_speaker_run) or the sr role's event loop
 * (sr_rsvp.c). State is a small table: one entry per (flow, previous hop), or
 * per (flow, list) at the source. Every datagram goes through
 * rsvp_parse() first; what it refuses is counted by reason and dropped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <linux/dmsc.h>

#include <json-c/json.h>

#include "nl.h"
#include "nl_event.h"
#include "rsvp_speaker.h"

#define STATES_MAX	1024
#define LISTS_MAX	2	/* primary, backup */

static const char *const counter_names[RC_COUNT] = {
	"rx_path", "rx_resv", "rx_pathtear", "rx_patherr",
	"tx_path", "tx_resv", "tx_pathtear", "tx_patherr",
	"retransmits", "gave_up", "expired", "unknown_session",
	"kernel_errors", "sessions_added", "sessions_deleted",
	"ignored_objects", "table_full", "backups_set", "backups_cleared",
	"backup_moved", "backup_no_session", "tail_shared",
	"tail_no_returns", "tail_replaced",
	"events_seen", "events_ignored", "events_malformed", "events_lost",
	"resyncs", "failovers_handled", "primary_torn", "primary_resignalled",
	"failover_no_backup",
};

/*
 * ST_MOVED: a source's primary left for its backup list after the
 * kernel moved the flow there (its events): PathTear sent, no refresh;
 * its kernel session, now on the backup's credit, is kept.
 */
enum st { ST_WAIT, ST_UP, ST_FAILED, ST_MOVED };
static const char *const st_names[] = { "wait", "up", "failed", "moved" };

struct state {
	bool used;
	struct rsvp_flow flow;
	bool source;
	uint32_t owner;			/* source: who set it up (RSVP_OWNER_*) */
	int list;			/* source: 0 primary, 1 backup */
	uint32_t tunnel;		/* source: the flow's tunnel, 0 none */
	struct rsvp_addr prev;		/* not at the source */
	uint32_t prev_lih;
	bool tail;			/* no next hop */
	struct rsvp_addr next;
	unsigned int nrest;		/* hops after next */
	struct rsvp_addr rest[RSVP_ERO_HOPS_MAX];
	enum st st;
	/*
	 * source, backup: its PATH waits until the primary is up or failed,
	 * so that at the tail where both lists meet the primary's comes
	 * first and has the kernel session (tail_session())
	 */
	bool held;
	char why[320];			/* ST_FAILED: the reason */
	uint64_t credit;		/* granted by next, bytes */
	uint8_t form;
	bool kernel;			/* our kernel session exists */
	/* source, primary: the backup's credit in that session */
	enum rsvp_backup bk;		/* _NO, _KERNEL, _MOVED, ... */
	struct rsvp_addr bk_next;	/* _KERNEL: what it holds */
	uint64_t bk_credit;
	unsigned int tries;
	uint64_t retry_at, refresh_at, expire_at;
	uint32_t refresh_ms;		/* the R PATH came with */
	/* source, primary: what a tunnel dump said (resync()), 0 nothing */
	uint8_t resync_to;		/* DMSC_EVENT_TUNNEL_BACKUP or _PRIMARY */
};

struct rsvp_speaker {
	const struct rsvp_speaker_cfg *cfg;	/* &own */
	struct rsvp_speaker_cfg own;
	char ctl_path[108];
	int fd6, fd4, ctl;
	struct dmsc_nl nl;
	bool nl_open;
	/*
	 * The events group on a socket of its own: on the request socket
	 * they would mix with the replies dmsc_nl_talk() waits for.
	 */
	struct dmsc_nl ev;
	bool ev_open;
	struct dmsc_nl_listener evl;
	struct state st[STATES_MAX];
	uint64_t c[RC_COUNT];
	uint64_t refused[RSVP_REASON_COUNT];
	bool closing;		/* dropping every state: no hand-over */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *ntop(const struct rsvp_addr *a, char *buf, size_t len)
{
	if (!a->family || !inet_ntop(a->family, a->a, buf, len))
		snprintf(buf, len, "-");
	return buf;
}

static void flow_of(const struct rsvp_msg *m, struct rsvp_flow *f)
{
	memset(f, 0, sizeof(*f));
	f->dst = m->dst;
	f->src = m->src;
	f->sport = m->sport;
	f->qpn = m->qpn;
}

static const struct rsvp_addr *me_for(const struct rsvp_speaker *s,
				      const struct rsvp_addr *peer)
{
	return peer->family == AF_INET ? &s->cfg->addr4 : &s->cfg->addr6;
}

/* "10.1.0.1:49152 > 10.2.0.1 QP 256", for the log. */
static const char *flow_name(const struct rsvp_flow *f, char *buf, size_t len)
{
	char a[2][INET6_ADDRSTRLEN];

	snprintf(buf, len, "%s:%u > %s QP %u", ntop(&f->src, a[0], sizeof(a[0])),
		 f->sport, ntop(&f->dst, a[1], sizeof(a[1])), f->qpn);
	return buf;
}

/* The source's state of @f's list @list: its index, or -1. */
static int source_list(const struct rsvp_speaker *s, const struct rsvp_flow *f,
		       int list)
{
	for (int i = 0; i < STATES_MAX; i++) {
		const struct state *e = &s->st[i];

		if (e->used && e->source && e->list == list &&
		    rsvp_flow_eq(&e->flow, f))
			return i;
	}
	return -1;
}

/* ---- the kernel's credit sessions, through the CLI's netlink code ---- */

/* A hop's address as the kernel takes it: IPv4 goes IPv4-mapped. */
static void put_hop(struct nl_msg *msg, int attr, const struct rsvp_addr *a)
{
	struct in6_addr nh;

	memset(&nh, 0, sizeof(nh));
	if (a->family == AF_INET) {
		nh.s6_addr[10] = nh.s6_addr[11] = 0xff;
		memcpy(&nh.s6_addr[12], a->a, 4);
	} else {
		memcpy(&nh, a->a, 16);
	}
	nla_put(msg, attr, sizeof(nh), &nh);
}

/* The kernel's credit mode for a hop that answered in @form. */
static uint8_t form_mode(uint8_t form)
{
	return form == RSVP_CTYPE_CREDIT_MB ? DMSC_CREDIT_MODE_DELTA :
					      DMSC_CREDIT_MODE_CUMULATIVE;
}

/*
 * @cmd for @e's session; @bk the backup list whose credit goes with it
 * (SESSION_NEW, SESSION_SET), or NULL (SESSION_SET: clear it).
 */
static struct nl_msg *session_msg(int cmd, const struct state *e,
				  const struct state *bk)
{
	const struct rsvp_flow *f = &e->flow;
	unsigned int alen = f->dst.family == AF_INET ? 4 : 16;
	struct nl_msg *msg = dmsc_nl_msg(cmd, 0);
	struct nlattr *n;

	if (!msg)
		return NULL;
	n = nla_nest_start(msg, DMSC_A_SESSION);
	nla_put_u8(msg, DMSC_SESSION_A_FAMILY, f->dst.family);
	nla_put(msg, DMSC_SESSION_A_SRC, alen, f->src.a);
	nla_put(msg, DMSC_SESSION_A_DST, alen, f->dst.a);
	nla_put_u16(msg, DMSC_SESSION_A_SPORT, f->sport);
	nla_put_u32(msg, DMSC_SESSION_A_QPN, f->qpn);
	if (cmd == DMSC_CMD_SESSION_NEW) {
		/* The tail spends no credit: it only returns what it frees. */
		if (!e->tail)
			put_hop(msg, DMSC_SESSION_A_NEXTHOP, &e->next);
		/*
		 * A transit hop returns the credit it frees to its previous
		 * hop; the kernel sends those returns over IPv6 only.
		 */
		if (!e->source && e->prev.family == AF_INET6)
			nla_put(msg, DMSC_SESSION_A_PREVHOP, 16, e->prev.a);
		nla_put_u8(msg, DMSC_SESSION_A_MODE, form_mode(e->form));
		if (!e->tail)
			nla_put_u64(msg, DMSC_SESSION_A_CREDIT, e->credit);
		/* The source's: the heartbeat's failover moves the tunnel. */
		if (e->source && e->tunnel)
			nla_put_u32(msg, DMSC_SESSION_A_TUNNEL, e->tunnel);
	}
	if (bk) {
		put_hop(msg, DMSC_SESSION_A_BACKUP_NEXTHOP, &bk->next);
		nla_put_u64(msg, DMSC_SESSION_A_BACKUP_CREDIT, bk->credit);
		/*
		 * The form the backup's first hop answered in: the kernel
		 * takes it with the backup's credit at the move, so that hop
		 * may return credit in another form than the primary's.
		 * Left out when it is the session's (the kernel's default),
		 * which a module without the attribute also takes.
		 */
		if (form_mode(bk->form) != form_mode(e->form))
			nla_put_u8(msg, DMSC_SESSION_A_BACKUP_MODE,
				   form_mode(bk->form));
	}
	nla_nest_end(msg, n);
	return msg;
}

/* @msg (consumed) to the kernel; 0 without one (no_kernel). */
static int talk(struct rsvp_speaker *s, struct nl_msg *msg)
{
	if (!msg)
		return -ENOMEM;
	if (s->cfg->no_kernel) {
		nlmsg_free(msg);
		return 0;
	}
	return dmsc_nl_talk(&s->nl, msg, NULL, NULL);
}

static void kernel_why(const struct rsvp_speaker *s, int err, char *why,
		       size_t len)
{
	snprintf(why, len, "kernel: %s%s%s", strerror(-err),
		 s->nl.errmsg[0] ? ": " : "", s->nl.errmsg);
}

/*
 * The backup list of @p's flow, when its credit can go into @p's kernel
 * session: @p the source's primary with a tunnel (the kernel takes a
 * backup only with one), the backup up with a credit the kernel takes,
 * through another first hop.
 */
static struct state *backup_for(struct rsvp_speaker *s, const struct state *p)
{
	struct state *b;
	int i;

	if (!p->source || p->list || !p->tunnel)
		return NULL;
	i = source_list(s, &p->flow, 1);
	if (i < 0)
		return NULL;
	b = &s->st[i];
	if (b->st != ST_UP || !b->credit || b->credit > DMSC_CREDIT_MAX ||
	    rsvp_addr_eq(&b->next, &p->next))
		return NULL;
	return b;
}

/* What the kernel session of @p now holds of the backup list @bk. */
static void kept_backup(struct state *p, const struct state *bk)
{
	p->bk = RSVP_BACKUP_KERNEL;
	p->bk_next = bk->next;
	p->bk_credit = bk->credit;
}

static int kernel_session(struct rsvp_speaker *s, struct state *e, bool add)
{
	struct state *bk = add ? backup_for(s, e) : NULL;
	char first[sizeof(e->why)] = "", fl[128];
	int err;

	err = talk(s, session_msg(add ? DMSC_CMD_SESSION_NEW :
				  DMSC_CMD_SESSION_DEL, e, bk));
	if (err && bk && err != -EEXIST) {
		/* A module without backups, say: the session without it. */
		kernel_why(s, err, first, sizeof(first));
		s->c[RC_KERNEL_ERRORS]++;
		err = talk(s, session_msg(DMSC_CMD_SESSION_NEW, e, NULL));
		if (!err)
			fprintf(stderr, "dmsc-rsvp: %s: session add with the backup's credit: %s; added without\n",
				flow_name(&e->flow, fl, sizeof(fl)), first);
	}
	if (err) {
		s->c[RC_KERNEL_ERRORS]++;
		kernel_why(s, err, e->why, sizeof(e->why));
		fprintf(stderr, "dmsc-rsvp: session %s: %s\n",
			add ? "add" : "del", e->why);
		return err;
	}
	e->kernel = add;
	e->bk = first[0] ? RSVP_BACKUP_REFUSED : RSVP_BACKUP_NO;
	if (add && bk && !first[0]) {
		kept_backup(e, bk);
		s->c[RC_BACKUPS_SET]++;
	}
	if (!s->cfg->no_kernel)
		s->c[add ? RC_SESSIONS_ADDED : RC_SESSIONS_DELETED]++;
	return 0;
}

/*
 * The primary's kernel session of @f made to hold what the backup list
 * is now: its credit once it is up (SESSION_SET with it), nothing once
 * it failed or went (SESSION_SET without). A session the kernel moved
 * onto its backup, or failed, already (EBUSY), or does not have
 * (ENOENT), has nothing to change: said once, and left so until it is
 * made again.
 */
static void sync_backup(struct rsvp_speaker *s, const struct rsvp_flow *f)
{
	char why[sizeof(s->st[0].why)], fl[128];
	struct state *p, *bk;
	int i = source_list(s, f, 0), err;

	if (i < 0)
		return;
	p = &s->st[i];
	if (!p->kernel ||
	    (p->bk != RSVP_BACKUP_NO && p->bk != RSVP_BACKUP_KERNEL))
		return;
	bk = backup_for(s, p);
	if (bk ? p->bk == RSVP_BACKUP_KERNEL &&
		 rsvp_addr_eq(&bk->next, &p->bk_next) &&
		 bk->credit == p->bk_credit :
		 p->bk == RSVP_BACKUP_NO)
		return;
	err = talk(s, session_msg(DMSC_CMD_SESSION_SET, p, bk));
	if (!err) {
		if (bk) {
			kept_backup(p, bk);
			s->c[RC_BACKUPS_SET]++;
		} else {
			p->bk = RSVP_BACKUP_NO;
			s->c[RC_BACKUPS_CLEARED]++;
		}
		return;
	}
	flow_name(f, fl, sizeof(fl));
	if (err == -EBUSY) {
		p->bk = RSVP_BACKUP_MOVED;
		s->c[RC_BACKUP_MOVED]++;
		fprintf(stderr, "dmsc-rsvp: %s: the kernel session moved onto its backup (or failed) already: left as it is\n",
			fl);
	} else if (err == -ENOENT) {
		p->bk = RSVP_BACKUP_NO_SESSION;
		s->c[RC_BACKUP_NO_SESSION]++;
		fprintf(stderr, "dmsc-rsvp: %s: no kernel session to give the backup to\n",
			fl);
	} else {
		p->bk = RSVP_BACKUP_REFUSED;
		s->c[RC_KERNEL_ERRORS]++;
		kernel_why(s, err, why, sizeof(why));
		fprintf(stderr, "dmsc-rsvp: %s: backup %s: %s\n", fl,
			bk ? "set" : "clear", why);
	}
}

/* ---- sending ---- */

static void send_to(struct rsvp_speaker *s, const struct rsvp_addr *to,
		    const struct rsvp_msg *m)
{
	static const int tx[] = {
		[RSVP_MSG_CBFC_PATH] = RC_TX_PATH,
		[RSVP_MSG_CBFC_RESV] = RC_TX_RESV,
		[RSVP_MSG_PATHTEAR] = RC_TX_PATHTEAR,
		[RSVP_MSG_PATHERR] = RC_TX_PATHERR,
	};
	struct sockaddr_storage ss;
	uint8_t buf[RSVP_MSG_MAX];
	char why[256], a[INET6_ADDRSTRLEN];
	socklen_t sl;
	int len, fd;

	len = rsvp_build(m, buf, sizeof(buf), why, sizeof(why));
	if (len < 0) {
		fprintf(stderr, "dmsc-rsvp: cannot build %s: %s\n",
			rsvp_type_name(m->type), why);
		return;
	}
	memset(&ss, 0, sizeof(ss));
	if (to->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, to->a, 4);
		sl = sizeof(*sin);
		fd = s->fd4;
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, to->a, 16);
		sl = sizeof(*sin6);
		fd = s->fd6;
	}
	if (fd < 0 || sendto(fd, buf, len, 0, (struct sockaddr *)&ss, sl) < 0) {
		fprintf(stderr, "dmsc-rsvp: send %s to %s: %s\n",
			rsvp_type_name(m->type), ntop(to, a, sizeof(a)),
			fd < 0 ? "no address of that family" : strerror(errno));
		return;
	}
	s->c[tx[m->type]]++;
}

/* The fields every message of @e's session carries. */
static void msg_init(struct rsvp_speaker *s, const struct state *e, uint8_t type,
		     const struct rsvp_addr *peer, struct rsvp_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->send_ttl = RSVP_HOP_LIMIT;
	m->dst = e->flow.dst;
	m->src = e->flow.src;
	m->sport = e->flow.sport;
	m->qpn = e->flow.qpn;
	m->hop = *me_for(s, peer);
	m->refresh_ms = e->refresh_ms;
}

static void send_path(struct rsvp_speaker *s, struct state *e)
{
	struct rsvp_msg m;

	msg_init(s, e, RSVP_MSG_CBFC_PATH, &e->next, &m);
	m.objs = RSVP_O_ERO;
	m.nhops = e->nrest;
	memcpy(m.hops, e->rest, e->nrest * sizeof(e->rest[0]));
	send_to(s, &e->next, &m);
}

/* Our own reservation, for the previous hop. */
static void send_resv(struct rsvp_speaker *s, struct state *e)
{
	const struct rsvp_speaker_cfg *c = s->cfg;
	struct rsvp_msg m;

	msg_init(s, e, RSVP_MSG_CBFC_RESV, &e->prev, &m);
	m.credit_ctype = c->form;
	m.credit_mb = (uint32_t)(c->credit >> 20);
	m.initial = c->credit;
	send_to(s, &e->prev, &m);
}

static void send_tear(struct rsvp_speaker *s, struct state *e)
{
	struct rsvp_msg m;

	msg_init(s, e, RSVP_MSG_PATHTEAR, &e->next, &m);
	send_to(s, &e->next, &m);
}

static void send_err(struct rsvp_speaker *s, struct state *e, uint8_t code,
		     const struct rsvp_addr *node)
{
	struct rsvp_msg m;

	msg_init(s, e, RSVP_MSG_PATHERR, &e->prev, &m);
	m.err_node = *node;
	m.err_code = code;
	send_to(s, &e->prev, &m);
}

/* ---- state ---- */

static struct state *find(struct rsvp_speaker *s, const struct rsvp_flow *f,
			  const struct rsvp_addr *prev,
			  const struct rsvp_addr *next)
{
	for (int i = 0; i < STATES_MAX; i++) {
		struct state *e = &s->st[i];

		/* A held backup has sent nothing: nothing can answer it. */
		if (!e->used || e->held || !rsvp_flow_eq(&e->flow, f))
			continue;
		if (prev && (e->source || !rsvp_addr_eq(&e->prev, prev)))
			continue;
		if (next && (e->tail || !rsvp_addr_eq(&e->next, next)))
			continue;
		return e;
	}
	return NULL;
}

static struct state *new_state(struct rsvp_speaker *s)
{
	for (int i = 0; i < STATES_MAX; i++) {
		if (!s->st[i].used) {
			memset(&s->st[i], 0, sizeof(s->st[i]));
			s->st[i].used = true;
			return &s->st[i];
		}
	}
	s->c[RC_TABLE_FULL]++;
	return NULL;
}

static void tail_session(struct rsvp_speaker *s, struct state *e);

/*
 * Another tail state of @e's flow (the other list's, where primary and
 * backup meet), or NULL.
 */
static struct state *other_tail(struct rsvp_speaker *s, const struct state *e)
{
	for (int i = 0; i < STATES_MAX; i++) {
		struct state *o = &s->st[i];

		if (o != e && o->used && o->tail &&
		    rsvp_flow_eq(&o->flow, &e->flow))
			return o;
	}
	return NULL;
}

/*
 * Remove @e: its kernel session first, then the entry. A tail's session
 * goes to the flow's other list, if it still arrives here.
 */
static void drop(struct rsvp_speaker *s, struct state *e)
{
	bool had = false;
	struct state *o;

	/* A session the kernel would not delete is not handed over. */
	if (e->kernel)
		had = !kernel_session(s, e, false);
	e->used = false;
	if (had && e->tail && !s->closing) {
		o = other_tail(s, e);
		if (o)
			tail_session(s, o);
	}
}

/* The primary of @f is up or failed: the held backup's PATH goes now. */
static void release_backup(struct rsvp_speaker *s, const struct rsvp_flow *f)
{
	int b = source_list(s, f, 1);
	struct state *e;

	if (b < 0 || !s->st[b].held)
		return;
	e = &s->st[b];
	e->held = false;
	e->st = ST_WAIT;
	e->why[0] = '\0';
	e->tries = 0;
	e->retry_at = now_ms() + s->cfg->retry_ms;
	send_path(s, e);
}

/* The source keeps a failed entry, so "status" can say why. */
static void fail(struct rsvp_speaker *s, struct state *e, const char *fmt,
		 const char *arg)
{
	if (e->kernel)
		kernel_session(s, e, false);
	if (!e->source) {
		e->used = false;
		return;
	}
	e->st = ST_FAILED;
	e->held = false;
	snprintf(e->why, sizeof(e->why), fmt, arg);
	/* The kernel holds a backup that failed no more. */
	if (e->list == 1)
		sync_backup(s, &e->flow);
	else
		release_backup(s, &e->flow);
}

/* The state of @e's flow that holds its kernel session here, or NULL. */
static const struct state *holder(const struct rsvp_speaker *s,
				  const struct state *e)
{
	for (int i = 0; i < STATES_MAX; i++) {
		const struct state *o = &s->st[i];

		if (o != e && o->used && o->kernel &&
		    rsvp_flow_eq(&o->flow, &e->flow))
			return o;
	}
	return NULL;
}

/*
 * The tail's kernel session: no next hop, the previous hop to return the
 * credit it frees to, in its own form (the one its RESV gave upstream).
 * Without it the hop before the tail would spend the tail's reservation
 * once and then wait for returns that never come. The kernel holds one
 * session per flow, so where a primary and a backup list meet at the tail
 * the list whose PATH came first has it (the source sends the backup's
 * PATH only once the primary is up or failed), and the other list's when
 * that one goes: the hop before the tail on the other list gets no
 * returns until then (Documentation/cbfc.md, "Not done yet"). Returns are
 * IPv6 only. A session found there is replaced; other kernel errors are
 * a PathErr upstream, as at a transit hop.
 */
static void tail_session(struct rsvp_speaker *s, struct state *e)
{
	char fl[128];
	int err;

	e->form = s->cfg->form;
	if (e->prev.family != AF_INET6) {
		s->c[RC_TAIL_NO_RETURNS]++;
		return;
	}
	if (holder(s, e)) {
		s->c[RC_TAIL_SHARED]++;
		return;
	}
	err = kernel_session(s, e, true);
	if (err == -EEXIST) {
		/*
		 * Left by a speaker that died (a restarted one finds its
		 * sessions there), or made by hand: the set-up's is the one
		 * to hold, so it takes the place of that one.
		 */
		fprintf(stderr, "dmsc-rsvp: %s: a credit session for the flow was there already (a speaker that died, or by hand): replaced\n",
			flow_name(&e->flow, fl, sizeof(fl)));
		s->c[RC_TAIL_REPLACED]++;
		err = talk(s, session_msg(DMSC_CMD_SESSION_DEL, e, NULL));
		if (!err)
			err = kernel_session(s, e, true);
	}
	if (err) {
		send_err(s, e, RSVP_ERR_API, me_for(s, &e->prev));
		e->used = false;
	}
}

/* ---- receiving ---- */

static void on_path(struct rsvp_speaker *s, const struct rsvp_msg *m)
{
	uint64_t now = now_ms();
	struct state *e;
	struct rsvp_flow f;

	flow_of(m, &f);
	e = find(s, &f, &m->hop, NULL);
	if (!e) {
		e = new_state(s);
		if (!e)
			return;
		e->flow = f;
		e->prev = m->hop;
		e->prev_lih = m->lih;
		e->refresh_ms = m->refresh_ms;
		e->tail = !m->nhops;
		if (!e->tail) {
			e->next = m->hops[0];
			e->nrest = m->nhops - 1;
			memcpy(e->rest, m->hops + 1,
			       e->nrest * sizeof(e->rest[0]));
			if (!me_for(s, &e->next)->family) {
				e->used = false;
				send_err(s, e, RSVP_ERR_CONFLICT,
					 me_for(s, &e->prev));
				return;
			}
		}
		e->st = e->tail ? ST_UP : ST_WAIT;
		if (e->tail) {
			tail_session(s, e);
			if (!e->used)
				return;	/* PathErr sent */
		} else {
			e->tries = 0;
			e->retry_at = now + s->cfg->retry_ms;
			send_path(s, e);
		}
	} else if (!e->tail) {
		/* A refresh goes on downstream: the hops after us time out too. */
		send_path(s, e);
	} else if (!e->kernel && e->prev.family == AF_INET6 && !holder(s, e)) {
		/* A tail state without the session, and nobody holds it. */
		tail_session(s, e);
		if (!e->used)
			return;	/* PathErr sent */
	}
	/* RFC 2205 3.7: (K + 0.5) * 1.5 * R with K = 3. */
	e->expire_at = now + (uint64_t)m->refresh_ms * 21 / 4;
	if (e->st == ST_UP)
		send_resv(s, e);
}

static void on_resv(struct rsvp_speaker *s, const struct rsvp_msg *m)
{
	struct state *e;
	struct rsvp_flow f;

	flow_of(m, &f);
	e = find(s, &f, NULL, &m->hop);
	if (!e || e->st == ST_FAILED || e->st == ST_MOVED) {
		s->c[RC_UNKNOWN_SESSION]++;
		return;
	}
	if (e->st == ST_UP)
		return;		/* a refresh: the credit stays as set up */
	e->credit = rsvp_credit_bytes(m);
	e->form = m->credit_ctype;
	/*
	 * The source has one kernel session per flow, the primary's; the
	 * backup's credit goes into it, now or when the primary is up.
	 */
	if (!e->source || e->list == 0) {
		if (kernel_session(s, e, true)) {
			/* e->why says what the kernel said. */
			if (e->source) {
				e->st = ST_FAILED;
				release_backup(s, &e->flow);
			} else {
				send_err(s, e, RSVP_ERR_API,
					 me_for(s, &e->prev));
				e->used = false;
			}
			return;
		}
	}
	e->st = ST_UP;
	e->refresh_at = now_ms() + e->refresh_ms;
	if (!e->source)
		send_resv(s, e);
	else if (e->list == 1)
		sync_backup(s, &e->flow);
	else
		release_backup(s, &e->flow);
}

static void on_tear(struct rsvp_speaker *s, const struct rsvp_msg *m)
{
	struct state *e;
	struct rsvp_flow f;

	flow_of(m, &f);
	e = find(s, &f, &m->hop, NULL);
	if (!e) {
		s->c[RC_UNKNOWN_SESSION]++;
		return;
	}
	if (!e->tail)
		send_tear(s, e);
	drop(s, e);
}

static void on_err(struct rsvp_speaker *s, const struct rsvp_msg *m,
		   const struct rsvp_addr *from)
{
	char a[INET6_ADDRSTRLEN], msg[96];
	struct state *e;
	struct rsvp_flow f;

	flow_of(m, &f);
	e = find(s, &f, NULL, from);
	/* A primary left for its backup: its session is the backup's now. */
	if (!e || e->st == ST_MOVED) {
		s->c[RC_UNKNOWN_SESSION]++;
		return;
	}
	if (!e->source)
		send_err(s, e, m->err_code, &m->err_node);
	snprintf(msg, sizeof(msg), "error %u from hop %s", m->err_code,
		 ntop(&m->err_node, a, sizeof(a)));
	fail(s, e, "%s", msg);
}

static void on_datagram(struct rsvp_speaker *s, const uint8_t *buf, size_t len,
			const struct rsvp_addr *from)
{
	char why[256], a[INET6_ADDRSTRLEN];
	enum rsvp_reason r;
	struct rsvp_msg m;

	r = rsvp_parse(buf, len, &m, why, sizeof(why));
	if (r != RSVP_OK) {
		s->refused[r]++;
		fprintf(stderr, "dmsc-rsvp: from %s: refused (%s): %s\n",
			ntop(from, a, sizeof(a)), rsvp_reason_name(r), why);
		return;
	}
	s->c[RC_IGNORED_OBJECTS] += m.ignored;
	switch (m.type) {
	case RSVP_MSG_CBFC_PATH:
		s->c[RC_RX_PATH]++;
		on_path(s, &m);
		break;
	case RSVP_MSG_CBFC_RESV:
		s->c[RC_RX_RESV]++;
		on_resv(s, &m);
		break;
	case RSVP_MSG_PATHTEAR:
		s->c[RC_RX_PATHTEAR]++;
		on_tear(s, &m);
		break;
	case RSVP_MSG_PATHERR:
		s->c[RC_RX_PATHERR]++;
		on_err(s, &m, from);
		break;
	}
}

static void read_raw(struct rsvp_speaker *s, int fd, int family)
{
	uint8_t buf[RSVP_MSG_MAX + 64 + 1];
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct rsvp_addr from;
	ssize_t n;
	size_t off = 0;

	n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT,
		     (struct sockaddr *)&ss, &sl);
	if (n < 0)
		return;
	memset(&from, 0, sizeof(from));
	from.family = family;
	if (family == AF_INET) {
		/* An IPv4 raw socket hands over the IP header too. */
		memcpy(from.a, &((struct sockaddr_in *)&ss)->sin_addr, 4);
		if (n < 20 || (buf[0] & 0xf) * 4 > n) {
			s->refused[RSVP_E_SHORT]++;
			return;
		}
		off = (buf[0] & 0xf) * 4;
	} else {
		memcpy(from.a, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
	}
	on_datagram(s, buf + off, n - off, &from);
}

/* ---- timers ---- */

void rsvp_speaker_tick(struct rsvp_speaker *s)
{
	uint64_t now = now_ms();
	char a[INET6_ADDRSTRLEN];

	for (int i = 0; i < STATES_MAX; i++) {
		struct state *e = &s->st[i];

		if (!e->used)
			continue;
		if (e->st == ST_WAIT && now >= e->retry_at) {
			/*
			 * A hop with more hops after its next one waits a
			 * retry longer per hop: the hop in front of a silent
			 * one gives up first and its PathErr names it.
			 */
			if (e->tries >= s->cfg->retries + e->nrest) {
				/* A hop without a speaker never answers. */
				s->c[RC_GAVE_UP]++;
				if (!e->source)
					send_err(s, e, RSVP_ERR_SYSTEM, &e->next);
				fail(s, e, "next hop %s did not answer",
				     ntop(&e->next, a, sizeof(a)));
				continue;
			}
			e->tries++;
			s->c[RC_RETRANSMITS]++;
			e->retry_at = now + ((uint64_t)s->cfg->retry_ms <<
					     (e->tries < 5 ? e->tries : 5));
			send_path(s, e);
		}
		if (e->source && e->st == ST_UP && now >= e->refresh_at) {
			e->refresh_at = now + e->refresh_ms;
			send_path(s, e);
		}
		if (!e->source && now >= e->expire_at) {
			s->c[RC_EXPIRED]++;
			if (!e->tail && e->st == ST_UP)
				send_tear(s, e);
			drop(s, e);
		}
	}
}

/* ---- control: one line in, lines out, then close ---- */

static int parse_addr(const char *str, struct rsvp_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, str, a->a) == 1)
		a->family = AF_INET;
	else if (inet_pton(AF_INET6, str, a->a) == 1)
		a->family = AF_INET6;
	return a->family ? 0 : -1;
}

static int parse_list(char *str, struct rsvp_addr *hops, unsigned int *n,
		      FILE *out)
{
	char *save = NULL, *t;

	*n = 0;
	for (t = strtok_r(str, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (*n == RSVP_ERO_HOPS_MAX + 1) {
			fprintf(out, "error: over %u hops\n",
				RSVP_ERO_HOPS_MAX + 1);
			return -1;
		}
		if (parse_addr(t, &hops[*n])) {
			fprintf(out, "error: hop \"%s\": not an address\n", t);
			return -1;
		}
		(*n)++;
	}
	if (!*n)
		fprintf(out, "error: empty hop list\n");
	return *n ? 0 : -1;
}

/* What a command takes after the flow. */
enum cmd_words {
	W_FLOW,		/* nothing */
	W_SETUP,	/* "path L [backup L] [tunnel N]" */
	W_SET,		/* "backup L|none" */
};

/* A command's words: "src A dst B sport N qpn N" and those of @kind. */
static int parse_cmd(char **w, int n, enum cmd_words kind, struct rsvp_flow *f,
		     struct rsvp_addr lists[LISTS_MAX][RSVP_ERO_HOPS_MAX + 1],
		     unsigned int *nh, uint32_t *tunnel, FILE *out)
{
	unsigned int have = 0;
	unsigned long v;
	char *end;

	memset(f, 0, sizeof(*f));
	for (int i = 0; i + 1 < n; i += 2) {
		const char *k = w[i];

		if (!strcmp(k, "src") || !strcmp(k, "dst")) {
			struct rsvp_addr *a = k[0] == 's' ? &f->src : &f->dst;

			if (parse_addr(w[i + 1], a)) {
				fprintf(out, "error: %s \"%s\": not an address\n",
					k, w[i + 1]);
				return -1;
			}
			have |= k[0] == 's' ? 1 : 2;
		} else if (!strcmp(k, "sport") || !strcmp(k, "qpn")) {
			errno = 0;
			v = strtoul(w[i + 1], &end, 0);
			if (errno || *end || v > (k[0] == 's' ? 65535 : DMSC_QPN_MAX)) {
				fprintf(out, "error: %s \"%s\": out of range\n",
					k, w[i + 1]);
				return -1;
			}
			if (k[0] == 's')
				f->sport = v;
			else
				f->qpn = v;
			have |= k[0] == 's' ? 4 : 8;
		} else if ((kind == W_SETUP && !strcmp(k, "path")) ||
			   (kind != W_FLOW && !strcmp(k, "backup"))) {
			int l = k[0] == 'b';

			have |= 16;
			if (kind == W_SET && !strcmp(w[i + 1], "none"))
				nh[l] = 0;
			else if (parse_list(w[i + 1], lists[l], &nh[l], out))
				return -1;
		} else if (kind == W_SETUP && !strcmp(k, "tunnel")) {
			errno = 0;
			v = strtoul(w[i + 1], &end, 0);
			if (errno || *end || w[i + 1][0] == '-' || !v ||
			    v > UINT32_MAX) {
				fprintf(out, "error: tunnel \"%s\": not in 1..%u\n",
					w[i + 1], UINT32_MAX);
				return -1;
			}
			*tunnel = v;
		} else {
			fprintf(out, "error: unknown word \"%s\"\n", k);
			return -1;
		}
	}
	if (n % 2 || (have & 15) != 15) {
		fprintf(out, "error: need src, dst, sport and qpn%s\n",
			n % 2 ? " (a word without a value)" : "");
		return -1;
	}
	if (f->src.family != f->dst.family) {
		fprintf(out, "error: src and dst of different families\n");
		return -1;
	}
	if (kind == W_SETUP && !nh[0]) {
		fprintf(out, "error: path: required\n");
		return -1;
	}
	if (kind == W_SET && !(have & 16)) {
		fprintf(out, "error: backup: required (hops, or none)\n");
		return -1;
	}
	return 0;
}

/* Check a list of @n hops for a set-up from here: 0, or -1 with @err. */
static int check_list(const struct rsvp_speaker *s, const char *name,
		      const struct rsvp_addr *hops, unsigned int n,
		      char *err, size_t errlen)
{
	if (n > RSVP_ERO_HOPS_MAX + 1) {
		snprintf(err, errlen, "%s: over %u hops", name,
			 RSVP_ERO_HOPS_MAX + 1);
		return -1;
	}
	if (n && !me_for(s, &hops[0])->family) {
		snprintf(err, errlen, "%s: no own address of hop 1's family",
			 name);
		return -1;
	}
	return 0;
}

/*
 * A source state for list @l of @f along @hops, its PATH sent now, or
 * (@hold) once release_backup() is called.
 */
static void start_list(struct rsvp_speaker *s, const struct rsvp_flow *f,
		       uint32_t owner, uint32_t tunnel, int l,
		       const struct rsvp_addr *hops, unsigned int n, bool hold)
{
	struct state *e = new_state(s);	/* the callers made sure of room */

	e->flow = *f;
	e->source = true;
	e->owner = owner;
	e->list = l;
	e->tunnel = tunnel;
	e->bk = RSVP_BACKUP_NO;
	e->next = hops[0];
	e->nrest = n - 1;
	memcpy(e->rest, &hops[1], e->nrest * sizeof(e->rest[0]));
	e->refresh_ms = s->cfg->refresh_ms;
	e->st = ST_WAIT;
	e->held = hold;
	if (hold) {
		e->retry_at = UINT64_MAX;
		return;
	}
	e->retry_at = now_ms() + s->cfg->retry_ms;
	send_path(s, e);
}

int rsvp_speaker_setup(struct rsvp_speaker *s, const struct rsvp_flow *f,
		       uint32_t owner, uint32_t tunnel,
		       const struct rsvp_addr *path, unsigned int npath,
		       const struct rsvp_addr *backup, unsigned int nbackup,
		       char *err, size_t errlen)
{
	int free_slots = 0;

	if (check_list(s, "path", path, npath, err, errlen) ||
	    check_list(s, "backup", backup, nbackup, err, errlen))
		return -1;
	if (!npath) {
		snprintf(err, errlen, "path: required");
		return -1;
	}
	if (f->src.family != f->dst.family) {
		snprintf(err, errlen, "src and dst of different families");
		return -1;
	}
	for (int i = 0; i < STATES_MAX; i++) {
		if (s->st[i].used && s->st[i].source &&
		    rsvp_flow_eq(&s->st[i].flow, f)) {
			snprintf(err, errlen, "flow already set up here");
			return -1;
		}
		free_slots += !s->st[i].used;
	}
	/* Both lists or neither: no half set-up to undo. */
	if (free_slots < 1 + !!nbackup) {
		s->c[RC_TABLE_FULL]++;
		snprintf(err, errlen, "state table full");
		return -1;
	}
	start_list(s, f, owner, tunnel, 0, path, npath, false);
	if (nbackup)
		start_list(s, f, owner, tunnel, 1, backup, nbackup, true);
	return 0;
}

int rsvp_speaker_set_backup(struct rsvp_speaker *s, const struct rsvp_flow *f,
			    uint32_t owner,
			    const struct rsvp_addr *backup, unsigned int nbackup,
			    char *err, size_t errlen)
{
	int p = source_list(s, f, 0), b = source_list(s, f, 1), free_slots = 0;

	if (p < 0 || (owner != RSVP_OWNER_ANY && s->st[p].owner != owner)) {
		snprintf(err, errlen, "no such flow set up here");
		return -1;
	}
	if (check_list(s, "backup", backup, nbackup, err, errlen))
		return -1;
	for (int i = 0; i < STATES_MAX; i++)
		free_slots += !s->st[i].used;
	if (nbackup && b < 0 && !free_slots) {
		s->c[RC_TABLE_FULL]++;
		snprintf(err, errlen, "state table full");
		return -1;
	}
	if (b >= 0) {
		if (!s->st[b].held)
			send_tear(s, &s->st[b]);
		drop(s, &s->st[b]);
	}
	if (nbackup)
		start_list(s, f, s->st[p].owner, s->st[p].tunnel, 1, backup,
			   nbackup, s->st[p].st != ST_UP);
	/* The old one's credit out of the kernel; the new one's once up. */
	sync_backup(s, f);
	return 0;
}

/* A source state of @f that @owner may see and change. */
static bool mine(const struct state *e, const struct rsvp_flow *f,
		 uint32_t owner)
{
	return e->used && e->source && rsvp_flow_eq(&e->flow, f) &&
	       (owner == RSVP_OWNER_ANY || e->owner == owner);
}

unsigned int rsvp_speaker_teardown(struct rsvp_speaker *s,
				   const struct rsvp_flow *f, uint32_t owner)
{
	unsigned int gone = 0;

	for (int i = 0; i < STATES_MAX; i++) {
		struct state *e = &s->st[i];

		if (!mine(e, f, owner))
			continue;
		/*
		 * Down every list, even one still waiting: the hops have
		 * state; but a held backup has sent nothing, and a primary
		 * left for its backup was torn down then.
		 */
		if (!e->held && e->st != ST_MOVED)
			send_tear(s, e);
		drop(s, e);
		gone++;
	}
	return gone;
}

/*
 * The backup list @e back to held: PathTear down it if its hops have
 * state, and signalled again by release_backup().
 */
static void hold_backup(struct rsvp_speaker *s, struct state *e)
{
	if (e->held)
		return;
	if (e->st != ST_FAILED)
		send_tear(s, e);
	e->held = true;
	e->st = ST_WAIT;
	e->why[0] = '\0';
	e->credit = 0;
	e->tries = 0;
	e->retry_at = UINT64_MAX;
	sync_backup(s, &e->flow);
}

unsigned int rsvp_speaker_retry(struct rsvp_speaker *s,
				const struct rsvp_flow *f, uint32_t owner)
{
	int p = source_list(s, f, 0), b = source_list(s, f, 1);
	uint64_t now = now_ms();
	unsigned int n = 0;

	/*
	 * A failed primary is signalled before its backup again, as at
	 * set-up: the backup goes back to held and follows once the primary
	 * is up or failed, so that at the tail the primary's PATH comes
	 * first and its state holds the tail's kernel session. (Else the
	 * backup's would, and the primary's last hop would get no returns
	 * once traffic is on the primary again.)
	 */
	if (p >= 0 && b >= 0 && mine(&s->st[p], f, owner) &&
	    s->st[p].st == ST_FAILED) {
		hold_backup(s, &s->st[b]);
		n++;
	}
	for (int i = 0; i < STATES_MAX; i++) {
		struct state *e = &s->st[i];

		if (!mine(e, f, owner) || e->st != ST_FAILED)
			continue;
		/* As set up anew, the list's hops kept; the others untouched. */
		e->st = ST_WAIT;
		e->why[0] = '\0';
		e->tries = 0;
		e->retry_at = now + s->cfg->retry_ms;
		send_path(s, e);
		n++;
	}
	return n;
}

/* ---- the kernel's events: failover at a flow's source ---- */

static void event_flow(const struct dmsc_nl_event *ev, struct rsvp_flow *f)
{
	unsigned int alen = ev->family == AF_INET ? 4 : 16;

	memset(f, 0, sizeof(*f));
	f->src.family = f->dst.family = ev->family;
	memcpy(f->src.a, ev->src, alen);
	memcpy(f->dst.a, ev->dst, alen);
	f->sport = ev->sport;
	f->qpn = ev->qpn;
}

/*
 * The kernel moved @p's flow (@p its primary here) onto the backup list:
 * stop refreshing the primary and tear it down, so that its hops' states
 * and sessions go and, where the two lists meet, the tail's session goes
 * to the backup's state and returns to the backup's last hop (else it
 * keeps returning to the primary's, and the backup's starves); see that
 * the backup is signalled. The kernel session stays: it is the flow's,
 * on the backup's credit now, and takes no SESSION_SET any more. 1 if
 * anything was done, 0 if it was done already.
 */
static int failover(struct rsvp_speaker *s, struct state *p, const char *what)
{
	char fl[128];
	struct state *b;
	int i;

	if (p->st == ST_MOVED)
		return 0;
	/*
	 * A kernel session moves only if it holds the backup's credit: one
	 * that holds none stays on the primary's credit while its tunnel
	 * is on the backup list (the kernel fails it when its heartbeat
	 * runs out). Tearing its primary down would leave it waiting for
	 * returns that no longer come while shown as moved. (A primary not
	 * up yet has no session: it moves, its backup signalled.)
	 */
	if (p->kernel && p->bk != RSVP_BACKUP_KERNEL) {
		s->c[RC_FAILOVER_NO_BACKUP]++;
		return 0;
	}
	/* A failed primary's hops dropped their state on its PathErr. */
	if (p->st != ST_FAILED) {
		send_tear(s, p);
		s->c[RC_PRIMARY_TORN]++;
	}
	p->st = ST_MOVED;
	snprintf(p->why, sizeof(p->why), "on the backup since %s", what);
	if (p->kernel)
		p->bk = RSVP_BACKUP_MOVED;
	i = source_list(s, &p->flow, 1);
	if (i >= 0) {
		b = &s->st[i];
		if (b->held) {
			release_backup(s, &p->flow);
		} else if (b->st == ST_FAILED) {
			b->st = ST_WAIT;
			b->why[0] = '\0';
			b->tries = 0;
			b->retry_at = now_ms() + s->cfg->retry_ms;
			send_path(s, b);
		}
	}
	s->c[RC_FAILOVERS_HANDLED]++;
	fprintf(stderr, "dmsc-rsvp: %s: %s: on the backup, primary torn down\n",
		flow_name(&p->flow, fl, sizeof(fl)), what);
	return 1;
}

/*
 * @p's tunnel is on its primary again (an operator's or an agent's
 * switch), and the kernel failed @p's moved session: the primary is set
 * up anew, its backup torn down and held until then, as at a set-up, so
 * that at the tail the primary's PATH comes first and its last hop gets
 * the returns.
 */
static int back_to_primary(struct rsvp_speaker *s, struct state *p)
{
	char fl[128];
	int b;

	if (p->st != ST_MOVED)
		return 0;
	if (p->kernel && kernel_session(s, p, false))
		p->kernel = false;	/* gone already (ENOENT): counted */
	b = source_list(s, &p->flow, 1);
	if (b >= 0)
		hold_backup(s, &s->st[b]);
	p->st = ST_WAIT;
	p->why[0] = '\0';
	p->bk = RSVP_BACKUP_NO;
	p->tries = 0;
	p->retry_at = now_ms() + s->cfg->retry_ms;
	send_path(s, p);
	s->c[RC_PRIMARY_RESIGNALLED]++;
	fprintf(stderr, "dmsc-rsvp: %s: tunnel %u back on its primary: primary signalled anew\n",
		flow_name(&p->flow, fl, sizeof(fl)), p->tunnel);
	return 1;
}

/*
 * Each source primary steered by @tunnel: failover() (@backup) or
 * back_to_primary() done to it; how many acted.
 */
static int each_of_tunnel(struct rsvp_speaker *s, uint32_t tunnel,
			  bool backup, const char *what)
{
	int n = 0;

	for (int i = 0; i < STATES_MAX; i++) {
		struct state *p = &s->st[i];

		if (!p->used || !p->source || p->list || !p->tunnel ||
		    p->tunnel != tunnel)
			continue;
		n += backup ? failover(s, p, what) : back_to_primary(s, p);
	}
	return n;
}

/*
 * @ev acted on: how many flows it changed. A next hop's failure moves
 * the traffic only when the session moved onto its backup (on-backup 1);
 * one that only failed it (no backup credit, or no tunnel) leaves the
 * flow where it is, and its tunnel's own event says if it moved.
 */
static int on_event(struct rsvp_speaker *s, const struct dmsc_nl_event *ev)
{
	char what[64];
	struct rsvp_flow f;
	int p;

	switch (ev->type) {
	case DMSC_EVENT_NEXTHOP_FAILED:
	case DMSC_EVENT_NEXTHOP_DOWN:
		event_flow(ev, &f);
		p = source_list(s, &f, 0);
		/* Ours: the session our primary made, with its tunnel. */
		if (p < 0 || !s->st[p].kernel || !s->st[p].tunnel ||
		    ev->on_backup != 1)
			return 0;
		return failover(s, &s->st[p], dmsc_nl_event_name(ev->type));
	case DMSC_EVENT_TUNNEL_BACKUP:
	case DMSC_EVENT_TUNNEL_PRIMARY:
		if (!ev->tunnel)
			return 0;
		snprintf(what, sizeof(what), "%s %u",
			 dmsc_nl_event_name(ev->type), ev->tunnel);
		return each_of_tunnel(s, ev->tunnel,
				      ev->type == DMSC_EVENT_TUNNEL_BACKUP, what);
	}
	return 0;	/* a type this build does not know */
}

void rsvp_speaker_event(struct rsvp_speaker *s, struct nlattr **top)
{
	struct dmsc_nl_event ev;
	char why[128];

	s->c[RC_EVENTS_SEEN]++;
	if (dmsc_nl_event_decode(top, &ev, why, sizeof(why)) ||
	    dmsc_nl_event_check(&ev, why, sizeof(why))) {
		s->c[RC_EVENTS_MALFORMED]++;
		fprintf(stderr, "dmsc-rsvp: kernel event refused: %s\n", why);
		return;
	}
	if (!on_event(s, &ev))
		s->c[RC_EVENTS_IGNORED]++;
}

static int on_nl_event(struct nlattr **top, void *arg)
{
	rsvp_speaker_event(arg, top);
	return 0;
}

/*
 * A tunnel of the dump: its flows marked with what its switch would have
 * said, acted on once the dump is read. Not now: back_to_primary() asks
 * the kernel (SESSION_DEL) on the socket whose dump is still being read.
 */
static int resync_tunnel(struct nlattr **top, void *arg)
{
	struct nlattr *tb[DMSC_TUNNEL_A_MAX + 1];
	struct rsvp_speaker *s = arg;
	uint32_t id;
	uint8_t to;

	if (!top[DMSC_A_TUNNEL] ||
	    nla_parse_nested(tb, DMSC_TUNNEL_A_MAX, top[DMSC_A_TUNNEL], NULL) ||
	    !tb[DMSC_TUNNEL_A_ID] || nla_len(tb[DMSC_TUNNEL_A_ID]) != 4 ||
	    !tb[DMSC_TUNNEL_A_ACTIVE] || nla_len(tb[DMSC_TUNNEL_A_ACTIVE]) != 1)
		return 0;
	id = nla_get_u32(tb[DMSC_TUNNEL_A_ID]);
	/* The dump shows a tunnel moved early by a qdisc as on its backup. */
	to = nla_get_u8(tb[DMSC_TUNNEL_A_ACTIVE]) == DMSC_ACTIVE_BACKUP ?
	     DMSC_EVENT_TUNNEL_BACKUP : DMSC_EVENT_TUNNEL_PRIMARY;
	for (int i = 0; i < STATES_MAX; i++) {
		struct state *p = &s->st[i];

		if (p->used && p->source && !p->list && p->tunnel &&
		    p->tunnel == id)
			p->resync_to = to;
	}
	return 0;
}

/*
 * Events were lost (the socket overran, ENOBUFS, or failed): what they
 * would have said is read from the tunnels as they are now. A session
 * moves onto its backup only with its tunnel, so the tunnels are enough:
 * one on its backup is a TUNNEL_BACKUP for the flows it steers, one on
 * its primary a TUNNEL_PRIMARY (nothing for a flow that never moved).
 */
static void resync(struct rsvp_speaker *s)
{
	struct nl_msg *msg;
	int err;

	s->c[RC_RESYNCS]++;
	if (!s->nl_open)
		return;
	msg = dmsc_nl_msg(DMSC_CMD_TUNNEL_GET, NLM_F_DUMP);
	if (!msg)
		return;
	err = dmsc_nl_talk(&s->nl, msg, resync_tunnel, s);
	if (err) {
		s->c[RC_KERNEL_ERRORS]++;
		fprintf(stderr, "dmsc-rsvp: events lost, and the tunnels could not be read: %s\n",
			strerror(-err));
	}
	/* What was read is acted on, even from a dump cut short. */
	for (int i = 0; i < STATES_MAX; i++) {
		struct state *p = &s->st[i];
		char what[64];

		if (!p->used || !p->resync_to)
			continue;
		snprintf(what, sizeof(what), "a dump (tunnel %u on its %s)",
			 p->tunnel, p->resync_to == DMSC_EVENT_TUNNEL_BACKUP ?
			 "backup" : "primary");
		if (p->resync_to == DMSC_EVENT_TUNNEL_BACKUP)
			failover(s, p, what);
		else
			back_to_primary(s, p);
		p->resync_to = 0;
	}
}

/* The events socket is readable. */
static void read_events(struct rsvp_speaker *s)
{
	int err = dmsc_nl_listen_recv(&s->ev, &s->evl);

	s->evl.err = 0;
	if (err >= 0)
		return;
	s->c[RC_EVENTS_LOST]++;
	fprintf(stderr, "dmsc-rsvp: kernel events lost (%s): reading the tunnels again\n",
		strerror(-err));
	resync(s);
}

/*
 * The events group joined on a socket of its own, non-blocking for the
 * loop. A module without the group, or a socket that fails, leaves the
 * speaker without events (said): it runs as before them.
 */
static void open_events(struct rsvp_speaker *s)
{
	int err = dmsc_nl_open(&s->ev);

	if (!err) {
		s->ev_open = true;
		s->evl = (struct dmsc_nl_listener){
			.cmd_filter = DMSC_CMD_EVENT,
			.parse = on_nl_event, .arg = s,
		};
		err = dmsc_nl_listen_start(&s->ev, &s->evl);
	}
	if (!err && s->ev.sk && nl_socket_set_nonblocking(s->ev.sk) < 0)
		err = -EIO;
	if (!err) {
		/* Room for a burst: a link down fails every session at once. */
		if (s->ev.sk)
			nl_socket_set_buffer_size(s->ev.sk, 1 << 20, 0);
		return;
	}
	fprintf(stderr, "dmsc-rsvp: the kernel's events: %s: failovers are not followed\n",
		strerror(-err));
	if (s->ev_open)
		dmsc_nl_close(&s->ev);
	s->ev_open = false;
}

enum rsvp_status rsvp_speaker_status(const struct rsvp_speaker *s,
				     const struct rsvp_flow *f,
				     uint32_t owner, char *why, size_t len)
{
	enum rsvp_status worst = RSVP_NONE;

	for (int i = 0; i < STATES_MAX; i++) {
		const struct state *e = &s->st[i];
		enum rsvp_status st;

		if (!mine(e, f, owner))
			continue;
		/* A primary left for its backup: the backup says how it is. */
		st = e->st == ST_UP || e->st == ST_MOVED ? RSVP_UP :
		     e->st == ST_WAIT ? RSVP_WAIT : RSVP_FAILED;
		if (st == RSVP_FAILED && worst != RSVP_FAILED && why)
			snprintf(why, len, "%s: %s", e->list ? "backup" : "primary",
				 e->why);
		/* failed, then waiting, then up: the list furthest behind */
		if (worst == RSVP_NONE || st > worst)
			worst = st;
	}
	return worst;
}

enum rsvp_backup rsvp_speaker_backup(const struct rsvp_speaker *s,
				     const struct rsvp_flow *f, uint32_t owner)
{
	int p = source_list(s, f, 0);

	if (p < 0 || (owner != RSVP_OWNER_ANY && s->st[p].owner != owner) ||
	    !s->st[p].tunnel || source_list(s, f, 1) < 0)
		return RSVP_BACKUP_NONE;
	return s->st[p].bk;
}

const char *rsvp_backup_name(enum rsvp_backup b)
{
	static const char *const names[] = {
		[RSVP_BACKUP_NONE] = "none", [RSVP_BACKUP_NO] = "no",
		[RSVP_BACKUP_KERNEL] = "yes", [RSVP_BACKUP_MOVED] = "moved",
		[RSVP_BACKUP_NO_SESSION] = "no-session",
		[RSVP_BACKUP_REFUSED] = "refused",
	};

	return b < sizeof(names) / sizeof(names[0]) ? names[b] : "?";
}

static void ctl_setup(struct rsvp_speaker *s, char **w, int n, FILE *out)
{
	struct rsvp_addr lists[LISTS_MAX][RSVP_ERO_HOPS_MAX + 1];
	unsigned int nh[LISTS_MAX] = { 0, 0 };
	struct rsvp_flow f;
	uint32_t tunnel = 0;
	char err[128];

	if (parse_cmd(w, n, W_SETUP, &f, lists, nh, &tunnel, out))
		return;
	if (rsvp_speaker_setup(s, &f, RSVP_OWNER_CTL, tunnel, lists[0], nh[0],
			       lists[1], nh[1], err, sizeof(err)))
		fprintf(out, "error: %s\n", err);
	else
		fprintf(out, "ok\n");
}

/* "set FLOW backup L|none": whoever set it up, as teardown by hand. */
static void ctl_set(struct rsvp_speaker *s, char **w, int n, FILE *out)
{
	struct rsvp_addr lists[LISTS_MAX][RSVP_ERO_HOPS_MAX + 1];
	unsigned int nh[LISTS_MAX] = { 0, 0 };
	struct rsvp_flow f;
	char err[128];

	if (parse_cmd(w, n, W_SET, &f, lists, nh, NULL, out))
		return;
	if (rsvp_speaker_set_backup(s, &f, RSVP_OWNER_ANY, lists[1], nh[1],
				    err, sizeof(err)))
		fprintf(out, "error: %s\n", err);
	else
		fprintf(out, "ok\n");
}

static void ctl_status(struct rsvp_speaker *s, char **w, int n, FILE *out)
{
	char a[INET6_ADDRSTRLEN];
	bool any = false;
	struct rsvp_flow f;

	if (parse_cmd(w, n, W_FLOW, &f, NULL, NULL, NULL, out))
		return;
	/* The primary first; with a tunnel, where the backup's credit is. */
	for (int l = 0; l < LISTS_MAX; l++) {
		int i = source_list(s, &f, l);
		struct state *e;
		char more[40] = "";

		if (i < 0)
			continue;
		e = &s->st[i];
		any = true;
		if (e->tunnel && !l)
			snprintf(more, sizeof(more), " tunnel %u", e->tunnel);
		else if (e->tunnel)
			snprintf(more, sizeof(more), " kernel %s",
				 rsvp_backup_name(rsvp_speaker_backup(s, &f,
							RSVP_OWNER_ANY)));
		fprintf(out, "%s %s nexthop %s credit %llu%s%s%s\n",
			l ? "backup" : "primary",
			e->held ? "held" : st_names[e->st],
			ntop(&e->next, a, sizeof(a)),
			(unsigned long long)e->credit, more,
			e->st == ST_FAILED || e->st == ST_MOVED ? " # " : "",
			e->st == ST_FAILED || e->st == ST_MOVED ? e->why : "");
	}
	if (!any)
		fprintf(out, "none\n");
}

static void ctl_teardown(struct rsvp_speaker *s, char **w, int n, FILE *out)
{
	unsigned int gone;
	struct rsvp_flow f;

	if (parse_cmd(w, n, W_FLOW, &f, NULL, NULL, NULL, out))
		return;
	/* By hand: whoever set it up (a policy sets it up again). */
	gone = rsvp_speaker_teardown(s, &f, RSVP_OWNER_ANY);
	if (gone)
		fprintf(out, "ok %u\n", gone);
	else
		fprintf(out, "error: no such flow set up here\n");
}

static void ctl_state(struct rsvp_speaker *s, FILE *out)
{
	char a[4][INET6_ADDRSTRLEN];

	for (int i = 0; i < STATES_MAX; i++) {
		struct state *e = &s->st[i];

		if (!e->used)
			continue;
		fprintf(out, "dst %s src %s sport %u qpn %u prev %s next %s %s credit %llu kernel %d\n",
			ntop(&e->flow.dst, a[0], sizeof(a[0])),
			ntop(&e->flow.src, a[1], sizeof(a[1])),
			e->flow.sport, e->flow.qpn,
			e->source ? "source" : ntop(&e->prev, a[2], sizeof(a[2])),
			e->tail ? "tail" : ntop(&e->next, a[3], sizeof(a[3])),
			st_names[e->st], (unsigned long long)e->credit, e->kernel);
	}
}

static void ctl_stats(struct rsvp_speaker *s, FILE *out)
{
	for (int i = 0; i < RC_COUNT; i++)
		fprintf(out, "%s %llu\n", counter_names[i],
			(unsigned long long)s->c[i]);
	for (int r = 1; r < RSVP_REASON_COUNT; r++)
		fprintf(out, "refused_%s %llu\n", rsvp_reason_name(r),
			(unsigned long long)s->refused[r]);
}

static void ctl_accept(struct rsvp_speaker *s)
{
	char line[1024], *w[64], *save = NULL, *t;
	int fd, n = 0;
	ssize_t len;
	FILE *out;

	fd = accept(s->ctl, NULL, NULL);
	if (fd < 0)
		return;
	/*
	 * A client writes its line at once and reads the answer: one that
	 * does neither holds the loop (the agent's too) 1 s each way, no
	 * more. Only root can connect (open_ctl).
	 */
	struct timeval tv = { .tv_sec = 1 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	len = recv(fd, line, sizeof(line) - 1, 0);
	if (len <= 0) {
		close(fd);
		return;
	}
	line[len] = 0;
	for (t = strtok_r(line, " \t\n", &save); t && n < 64;
	     t = strtok_r(NULL, " \t\n", &save))
		w[n++] = t;
	out = fdopen(fd, "w");
	if (!out) {
		close(fd);
		return;
	}
	if (!n)
		fprintf(out, "error: empty command\n");
	else if (!strcmp(w[0], "setup"))
		ctl_setup(s, w + 1, n - 1, out);
	else if (!strcmp(w[0], "set"))
		ctl_set(s, w + 1, n - 1, out);
	else if (!strcmp(w[0], "status"))
		ctl_status(s, w + 1, n - 1, out);
	else if (!strcmp(w[0], "teardown"))
		ctl_teardown(s, w + 1, n - 1, out);
	else if (!strcmp(w[0], "stats"))
		ctl_stats(s, out);
	else if (!strcmp(w[0], "state"))
		ctl_state(s, out);
	else
		fprintf(out, "error: unknown command \"%s\"\n", w[0]);
	fclose(out);
}

/* ---- set-up of the sockets and the loop ---- */

static int open_raw(const struct rsvp_addr *a)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd, ttl = RSVP_HOP_LIMIT;

	fd = socket(a->family, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RSVP);
	if (fd < 0)
		return -1;
	memset(&ss, 0, sizeof(ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, a->a, 4);
		sl = sizeof(*sin);
		setsockopt(fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl));
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, a->a, 16);
		sl = sizeof(*sin6);
		setsockopt(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &ttl,
			   sizeof(ttl));
	}
	/* Bound to our address: what we receive was sent to this node. */
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int open_ctl(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	unlink(path);
	/* Commands change kernel state: root's only, as the agent's own. */
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    chmod(path, 0600) < 0 || listen(fd, 8) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

struct rsvp_speaker *rsvp_speaker_open(const struct rsvp_speaker_cfg *cfg)
{
	struct rsvp_speaker *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	if (strlen(cfg->ctl_path) >= sizeof(s->ctl_path)) {
		fprintf(stderr, "dmsc-rsvp: control socket %s: %s\n",
			cfg->ctl_path, strerror(ENAMETOOLONG));
		free(s);
		return NULL;
	}
	/* A copy: the caller's may live on its stack (sr_rsvp_start). */
	s->own = *cfg;
	snprintf(s->ctl_path, sizeof(s->ctl_path), "%s", cfg->ctl_path);
	s->own.ctl_path = s->ctl_path;
	s->cfg = &s->own;
	s->fd4 = s->fd6 = s->ctl = -1;
	if (cfg->addr6.family && (s->fd6 = open_raw(&cfg->addr6)) < 0) {
		perror("dmsc-rsvp: raw IPv6 RSVP socket");
		goto fail;
	}
	if (cfg->addr4.family && (s->fd4 = open_raw(&cfg->addr4)) < 0) {
		perror("dmsc-rsvp: raw IPv4 RSVP socket");
		goto fail;
	}
	if ((s->ctl = open_ctl(s->ctl_path)) < 0) {
		fprintf(stderr, "dmsc-rsvp: control socket %s: %s\n",
			s->ctl_path, strerror(errno));
		goto fail;
	}
	if (!cfg->no_kernel) {
		err = dmsc_nl_open(&s->nl);
		if (err) {
			dmsc_nl_perror(&s->nl, "netlink", err);
			goto fail;
		}
		s->nl_open = true;
		open_events(s);
	}
	return s;
fail:
	rsvp_speaker_close(s);
	return NULL;
}

void rsvp_speaker_fds(const struct rsvp_speaker *s, int fds[RSVP_SPEAKER_FDS])
{
	fds[0] = s->fd6;
	fds[1] = s->fd4;
	fds[2] = s->ctl;
	fds[3] = s->ev_open && s->ev.sk ? nl_socket_get_fd(s->ev.sk) : -1;
}

void rsvp_speaker_input(struct rsvp_speaker *s, int fd)
{
	if (fd < 0)
		return;
	if (fd == s->fd6)
		read_raw(s, s->fd6, AF_INET6);
	else if (fd == s->fd4)
		read_raw(s, s->fd4, AF_INET);
	else if (fd == s->ctl)
		ctl_accept(s);
	else if (s->ev_open && s->ev.sk && fd == nl_socket_get_fd(s->ev.sk))
		read_events(s);
}

void rsvp_speaker_close(struct rsvp_speaker *s)
{
	if (!s)
		return;
	/* Leave no kernel session behind on the way out. */
	s->closing = true;
	for (int i = 0; i < STATES_MAX; i++)
		if (s->st[i].used)
			drop(s, &s->st[i]);
	if (s->ev_open)
		dmsc_nl_close(&s->ev);
	if (s->nl_open)
		dmsc_nl_close(&s->nl);
	if (s->ctl >= 0) {
		close(s->ctl);
		unlink(s->ctl_path);
	}
	if (s->fd4 >= 0)
		close(s->fd4);
	if (s->fd6 >= 0)
		close(s->fd6);
	free(s);
}

struct json_object *rsvp_speaker_json(const struct rsvp_speaker *s)
{
	struct json_object *o = json_object_new_object();
	struct json_object *c = json_object_new_object();
	struct json_object *r = json_object_new_object();
	int i, n = 0, up = 0, bk = 0;

	for (i = 0; i < STATES_MAX; i++) {
		n += s->st[i].used;
		up += s->st[i].used && s->st[i].st == ST_UP;
		bk += s->st[i].used && s->st[i].kernel &&
		      s->st[i].bk == RSVP_BACKUP_KERNEL;
	}
	json_object_object_add(o, "control",
			       json_object_new_string(s->ctl_path));
	json_object_object_add(o, "states", json_object_new_int(n));
	json_object_object_add(o, "states_up", json_object_new_int(up));
	/* Sources whose kernel session holds its backup's credit. */
	json_object_object_add(o, "backups_in_kernel", json_object_new_int(bk));
	/* Whether the kernel's failovers are followed (its events group). */
	json_object_object_add(o, "events", json_object_new_boolean(s->ev_open));
	for (i = 0; i < RC_COUNT; i++)
		json_object_object_add(c, counter_names[i],
				       json_object_new_uint64(s->c[i]));
	for (i = 1; i < RSVP_REASON_COUNT; i++)
		json_object_object_add(r, rsvp_reason_name(i),
				       json_object_new_uint64(s->refused[i]));
	json_object_object_add(o, "counters", c);
	json_object_object_add(o, "refused", r);
	return o;
}

int rsvp_speaker_run(const struct rsvp_speaker_cfg *cfg)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct rsvp_speaker *s = rsvp_speaker_open(cfg);
	int fds[RSVP_SPEAKER_FDS];

	if (!s)
		return 1;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	fprintf(stderr, "dmsc-rsvp: listening, control %s\n", cfg->ctl_path);
	rsvp_speaker_fds(s, fds);
	while (!stop) {
		struct pollfd p[RSVP_SPEAKER_FDS];
		int i;

		for (i = 0; i < RSVP_SPEAKER_FDS; i++)
			p[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
		if (poll(p, RSVP_SPEAKER_FDS, RSVP_SPEAKER_TICK_MS) < 0 &&
		    errno != EINTR)
			break;
		for (i = 0; i < RSVP_SPEAKER_FDS; i++)
			if (p[i].revents & POLLIN)
				rsvp_speaker_input(s, fds[i]);
		rsvp_speaker_tick(s);
	}
	rsvp_speaker_close(s);
	return 0;
}
