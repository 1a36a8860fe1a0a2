// SPDX-License-Identifier: GPL-2.0
/*
 * The srd role: the service registry on the network. SRs connect with
 * mutual TLS (and gateways, the mg role, which read the table as an SR
 * does but register nothing); type 1 from an SR registers, renews and
 * deregisters the instances of its own node in the store (registry.h);
 * every change is pushed to every SR as type 2 with the store's revision,
 * and each SR gets the full table when it connects and when it asks (a
 * gap). Anti-entropy:
 * an SR that sends digests of its table (type 1 "digest") gets the full
 * table only when its digest differs from the registry's; one that sends
 * none gets it every full_interval_ms. Leases are checked every tenth of
 * a second, so an instance expires within its ttl and 100 ms.
 */
#define _GNU_SOURCE	/* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/listener.h>

#include "agent.h"
#include "log.h"
#include "msg_auth.h"
#include "msg_node.h"
#include "msg_reg.h"
#include "registry.h"

#define EXPIRE_CHECK_MS	100
#define SRD_LOG_KEEP	100000
/*
 * A digest at another revision than the SRD last sent that SR cannot be
 * compared (pushes are on the way); after this many in a row the SR gets
 * the full table anyway, so a registry that never rests is checked too.
 */
#define DIGEST_BEHIND_MAX	3
/*
 * A full table is a whole-registry list, a frame of up to 4 MiB and its
 * copy in the SR's output buffer: one that an SR asks for (a sync, a
 * digest that differs or was deferred too often) is sent it at most once
 * per FULL_GAP_MS, and not while more than FULL_BACKLOG bytes wait
 * unsent to it. Above that the request is counted (fulls_limited,
 * fulls_backlogged) and dropped: a digest that differs is repaired by the
 * next one after the gap; a peer waiting for its table (unsynced: its
 * sync, its first table, a table the store could not list) gets it from
 * the lease check's tick once the gap has passed and its backlog drained.
 */
#define FULL_GAP_MS	1000
#define FULL_BACKLOG	(1u << 20)
/*
 * The pushes and the periodic tables the registry drives are capped too:
 * a peer with more than PEER_BACKLOG bytes unsent (it does not read) gets
 * none; it is marked unsynced and waiting, and gets the full table from
 * the tick once it has read down to FULL_BACKLOG (peers_backlogged).
 */
#define PEER_BACKLOG	(8u << 20)

struct srd_peer {
	struct srd_role *r;
	struct conn *c;
	int up, synced;
	uint64_t msgs;
	uint64_t sent_rev;	/* the revision of the last type 2 sent it */
	uint64_t digests;	/* received: it checks itself, no periodic table */
	unsigned int behind;	/* digests in a row that could not be compared */
	int want;		/* waits for a full table (synced is 0) */
	int due;		/* send_full: this one gets it */
	int64_t full_ms;	/* its last full table, or the last try at one */
	struct srd_peer *next;
};

struct srd_role {
	struct agent *a;
	struct srd_store *st;
	struct evconnlistener *ln;
	struct event *expire_ev, *full_ev, *push_ev, *watch_ev;
	int wake_fd[2];		/* the store's watcher thread writes, the loop reads */
	struct srd_peer *peers;
	uint64_t pushed;	/* the revision every synced SR has been sent */
	uint64_t registered, renewed, deregistered, expired, pushes, fulls;
	uint64_t watch_wakes;	/* changes through another SRD (etcd) */
	/* anti-entropy by digest */
	uint64_t digests, digests_matched, digest_mismatches, digests_deferred;
	uint64_t digests_forced;	/* full tables after DIGEST_BEHIND_MAX deferred */
	uint64_t fulls_limited;		/* asked for within FULL_GAP_MS of the last */
	uint64_t fulls_backlogged;	/* asked for with FULL_BACKLOG unsent */
	uint64_t fulls_failed;		/* tables the store could not list */
	uint64_t pushes_overlapped;	/* from an SR's own revision: push_overlap() */
	uint64_t peers_backlogged;	/* set aside: PEER_BACKLOG unsent */
	size_t peer_backlog;		/* PEER_BACKLOG; the test build lowers it */
#ifdef DMSC_TEST_HOOKS
	unsigned int test_fail_list;	/* send_full's next lists fail */
#endif
	int dg_valid;		/* dg is the table's since the last push */
	uint64_t dg_rev;	/* the store's revision dg was listed at */
	char dg[MSG_DIGEST_HEX];
};

/* --- type 2 out ----------------------------------------------------------- */

static void to_msg(const struct srd_instance *i, struct msg_instance *m)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->id, sizeof(m->id), "%s", i->id);
	snprintf(m->node, sizeof(m->node), "%s", i->node);
	snprintf(m->sid, sizeof(m->sid), "%s", i->sid);
	snprintf(m->prefix, sizeof(m->prefix), "%s", i->prefix);
	snprintf(m->rtype, sizeof(m->rtype), "%s", i->rtype);
	snprintf(m->state, sizeof(m->state), "%s", srd_state_name(i->state));
	m->capability = i->capability;
	m->ttl_ms = i->ttl_ms;
}

struct table {
	struct msg_routes mr;
	size_t cap, wcap;
};

static int table_add(const struct srd_instance *i, void *arg)
{
	struct table *t = arg;

	if (t->mr.nroutes == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		void *p = realloc(t->mr.routes, cap * sizeof(*t->mr.routes));

		if (!p)
			return -1;
		t->mr.routes = p;
		t->cap = cap;
	}
	to_msg(i, &t->mr.routes[t->mr.nroutes++]);
	return 0;
}

/* A change: its put replaces, its delete or expiry withdraws. */
static int table_change(const struct srd_change *c, void *arg)
{
	struct table *t = arg;
	size_t k;

	/* only the last word on an id counts within one message */
	for (k = 0; k < t->mr.nroutes; k++)
		if (!strcmp(t->mr.routes[k].id, c->inst.id))
			t->mr.routes[k--] = t->mr.routes[--t->mr.nroutes];
	for (k = 0; k < t->mr.nwithdrawn; k++)
		if (!strcmp(t->mr.withdrawn[k], c->inst.id))
			memcpy(t->mr.withdrawn[k--], t->mr.withdrawn[--t->mr.nwithdrawn],
			       MSG_ID_MAX);
	if (c->op == SRD_OP_PUT)
		return table_add(&c->inst, t);
	if (t->mr.nwithdrawn == t->wcap) {
		size_t cap = t->wcap ? 2 * t->wcap : 16;
		void *p = realloc(t->mr.withdrawn, cap * MSG_ID_MAX);

		if (!p)
			return -1;
		t->mr.withdrawn = p;
		t->wcap = cap;
	}
	snprintf(t->mr.withdrawn[t->mr.nwithdrawn++], MSG_ID_MAX, "%s", c->inst.id);
	return 0;
}

/*
 * @p has PEER_BACKLOG bytes unsent: no more for it until it has read
 * them; the tick's FULL_DUE sends it the table then. 1 if set aside.
 */
static int backlogged(struct srd_role *r, struct srd_peer *p)
{
	if (conn_pending(p->c) <= r->peer_backlog)
		return 0;
	p->synced = 0;
	p->want = 1;
	r->peers_backlogged++;
	agent_log("srd: %s has %zu bytes unsent: no pushes to it until it reads them",
		  conn_peer(p->c)->node, conn_pending(p->c));
	return 1;
}

/* Who gets a full table. */
enum full_to {
	FULL_SYNCED,	/* every synced SR (a gap in the log, a push too large) */
	FULL_PERIODIC,	/* every synced SR that sends no digests */
	FULL_ONE,	/* the one SR (its connection, its sync, its digest) */
	FULL_DUE,	/* every SR waiting for one, whose gap has passed */
};

static void send_full(struct srd_role *r, struct srd_peer *p, enum full_to to);

/*
 * @p's full table was listed at a revision past the last push (another
 * SRD's change reached the store between the push before it and the
 * list): the push @m from r->pushed overlaps what @p has, and @p would
 * take the overlap for a gap and ask for the full table again. A push
 * holds only the last word on each id, which brings any table between
 * its prev and its rev to its rev, so @p gets the same changes with its
 * own revision as prev.
 */
static void push_overlap(struct srd_role *r, struct srd_peer *p,
			 struct msg *m, struct msg_routes *mr)
{
	char err[256], *frame;
	size_t len;

	mr->prev = p->sent_rev;
	if (msg_encode(m, &frame, &len, err, sizeof(err))) {
		agent_log("srd: push %llu..%llu to %s: %s",
			  (unsigned long long)mr->prev, (unsigned long long)mr->rev,
			  conn_peer(p->c)->node, err);
	} else {
		if (!conn_send(p->c, frame + MSG_HDR_LEN, len - MSG_HDR_LEN)) {
			p->msgs++;
			p->sent_rev = mr->rev;
			r->pushes_overlapped++;
		}
		free(frame);
	}
	mr->prev = r->pushed;
}

/*
 * Push what changed since the last push to every synced SR. @foreign: the
 * store's watch says another SRD changed it, which this SRD's idea of the
 * revision does not show yet: read the changes anyway (changes() brings
 * the revision up to date), and push only if there were any. 1 if
 * something went out (a push or full tables), 0 if nothing had to, -1
 * if the changes could not be read.
 */
static int push_now(struct srd_role *r, int foreign)
{
	struct table t = { 0 };
	char err[256];
	uint64_t rev = r->st->ops->revision(r->st);
	int rc, sent = 0;

	if (rev == r->pushed && !foreign)
		return 0;
	rc = r->st->ops->changes(r->st, r->pushed, table_change, &t, err,
				 sizeof(err));
	rev = r->st->ops->revision(r->st);
	if (foreign && rc == 0 && !t.mr.nroutes && !t.mr.nwithdrawn)
		goto out;	/* the SRs hear of the revision with the next change */
	if (rc < 0) {
		agent_log("srd: changes since %llu: %s",
			  (unsigned long long)r->pushed, err);
		sent = -1;
	} else if (rc == SRD_GAP) {
		/* the log is shorter than the distance: full tables for all */
		r->pushed = rev;
		r->dg_valid = 0;
		send_full(r, NULL, FULL_SYNCED);
		sent = 1;
	} else {
		struct msg m = { .type = &msg_routes_type, .body = &t.mr,
				 .seq = ++r->a->seq };
		char *frame;
		size_t len;

		t.mr.rev = rev;
		t.mr.prev = r->pushed;
		snprintf(m.node, sizeof(m.node), "%s", r->a->cfg.node);
		if (msg_encode(&m, &frame, &len, err, sizeof(err))) {
			/* too large for a frame: full tables instead */
			agent_log("srd: push %llu..%llu: %s",
				  (unsigned long long)r->pushed,
				  (unsigned long long)rev, err);
			r->pushed = rev;
			r->dg_valid = 0;
			send_full(r, NULL, FULL_SYNCED);
			sent = 1;
			goto out;
		}
		for (struct srd_peer *p = r->peers; p; p = p->next) {
			if (!p->synced || p->sent_rev >= rev)
				continue;	/* its full table has all of it */
			if (backlogged(r, p))
				continue;
			if (p->sent_rev > r->pushed) {
				push_overlap(r, p, &m, &t.mr);
				continue;
			}
			if (!conn_send(p->c, frame + MSG_HDR_LEN, len - MSG_HDR_LEN)) {
				p->msgs++;
				p->sent_rev = rev;
			}
		}
		free(frame);
		r->pushes++;
		r->pushed = rev;
		r->dg_valid = 0;
		sent = 1;
	}
out:
	free(t.mr.routes);
	free(t.mr.withdrawn);
	return sent;
}

/* An SR waiting for its full table whose gap has passed and backlog drained. */
static int full_due(struct srd_peer *p, int64_t now)
{
	return p->want && p->up && now - p->full_ms >= FULL_GAP_MS &&
	       conn_pending(p->c) <= FULL_BACKLOG;
}

/*
 * The full table to the SRs @to says (@only: FULL_ONE's): listed and
 * encoded once, whatever the number of SRs; not listed if none is to get
 * it. If it cannot be, the SRs waiting for it are tried again from the
 * lease check's tick, FULL_GAP_MS later.
 */
static void send_full(struct srd_role *r, struct srd_peer *only, enum full_to to)
{
	struct table t = { 0 };
	struct msg m = { .type = &msg_routes_type, .body = &t.mr };
	char err[256], *frame = NULL;
	int64_t now = agent_now_ms();
	size_t len;
	int n = 0;

	for (struct srd_peer *p = r->peers; p; p = p->next) {
		switch (to) {
		case FULL_SYNCED:
			p->due = p->synced && !backlogged(r, p);
			break;
		case FULL_PERIODIC:
			p->due = p->synced && !p->digests && !backlogged(r, p);
			break;
		case FULL_ONE:
			p->due = p == only;
			break;
		case FULL_DUE:
			p->due = full_due(p, now);
			break;
		}
		n += p->due;
	}
	if (!n)
		return;
#ifdef DMSC_TEST_HOOKS
	if (r->test_fail_list) {
		r->test_fail_list--;
		snprintf(err, sizeof(err), "test hook: the list fails");
		agent_log("srd: listing the registry: %s", err);
		goto fail;
	}
#endif
	if (r->st->ops->list(r->st, table_add, &t, &t.mr.rev, err, sizeof(err))) {
		agent_log("srd: listing the registry: %s", err);
		goto fail;
	}
	t.mr.full = true;
	m.seq = ++r->a->seq;
	snprintf(m.node, sizeof(m.node), "%s", r->a->cfg.node);
	if (msg_encode(&m, &frame, &len, err, sizeof(err))) {
		agent_log("srd: full table of %zu: %s", t.mr.nroutes, err);
		goto fail;
	}
	for (struct srd_peer *p = r->peers; p; p = p->next) {
		if (!p->due)
			continue;
		p->full_ms = now;	/* sent or not: the next try after the gap */
		if (!conn_send(p->c, frame + MSG_HDR_LEN, len - MSG_HDR_LEN)) {
			p->msgs++;
			p->synced = 1;
			p->want = 0;
			p->sent_rev = t.mr.rev;
			p->behind = 0;
			r->fulls++;
		}
	}
	goto out;
fail:
	r->fulls_failed++;
	/* those waiting for it: again after the gap (on_expire) */
	for (struct srd_peer *p = r->peers; p; p = p->next)
		if (p->due && p->want)
			p->full_ms = now;
out:
	free(frame);
	free(t.mr.routes);
}

/*
 * A full table @p asks for (a sync, a digest): 1 if it may have it now;
 * 0, counted, within FULL_GAP_MS of its last one or with FULL_BACKLOG
 * bytes waiting unsent to it.
 */
static int full_allowed(struct srd_role *r, struct srd_peer *p)
{
	if (p->full_ms && agent_now_ms() - p->full_ms < FULL_GAP_MS) {
		r->fulls_limited++;
		return 0;
	}
	if (conn_pending(p->c) > FULL_BACKLOG) {
		r->fulls_backlogged++;
		return 0;
	}
	return 1;
}

/* Changes of one turn of the loop go out as one message. */
static void on_push(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	push_now(arg, 0);
}

/* From the store's watcher thread: one byte, whatever the pipe holds. */
static void watch_wake(void *arg)
{
	struct srd_role *r = arg;
	ssize_t n = write(r->wake_fd[1], "w", 1);

	(void)n;	/* full (EAGAIN): a wake-up is pending anyway */
}

static void on_watch(evutil_socket_t fd, short what, void *arg)
{
	struct srd_role *r = arg;
	char buf[256];

	(void)what;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	r->watch_wakes++;
	push_now(r, 1);
}

static void changed(struct srd_role *r)
{
	event_active(r->push_ev, EV_TIMEOUT, 0);
}

/* A peer new or asking: what is pending goes to the others first, so the
 * full table it gets is as of the revision the next push starts from.
 * @asked (a sync, a digest while unsynced): within the limits of
 * full_allowed(), else it waits for the tick (retry_fulls).
 */
static void sync_peer(struct srd_role *r, struct srd_peer *p, int asked)
{
	p->synced = 0;
	p->want = 1;
	if (asked && !full_allowed(r, p))
		return;
	push_now(r, 0);
	send_full(r, p, FULL_ONE);
}

/* The SRs waiting for a full table (a list that failed, a limited sync). */
static void retry_fulls(struct srd_role *r)
{
	int64_t now = agent_now_ms();
	struct srd_peer *p;

	for (p = r->peers; p && !full_due(p, now); p = p->next)
		;
	if (!p)
		return;
	push_now(r, 0);
	send_full(r, NULL, FULL_DUE);
}

/*
 * The digest of the registry's table, computed once per revision pushed,
 * whatever the number of SRs asking, and the revision it was listed at
 * (dg_rev). With one SRD on the store that is the revision pushed; on a
 * store shared with other SRDs (etcd) it may be later: the list shows
 * their changes before this SRD's watch has woken it to push them.
 */
static int table_digest(struct srd_role *r, char *err, size_t errlen)
{
	struct table t = { 0 };
	uint64_t rev;
	int rc = -1;

	if (r->dg_valid)
		return 0;
	if (r->st->ops->list(r->st, table_add, &t, &rev, err, errlen))
		goto out;
	if (msg_routes_digest(t.mr.routes, t.mr.nroutes, r->dg)) {
		snprintf(err, errlen, "SHA-256 failed");
		goto out;
	}
	r->dg_rev = rev;
	r->dg_valid = 1;
	rc = 0;
out:
	free(t.mr.routes);
	return rc;
}

/*
 * An SR's digest of its table at revision @g->rev. Equal to the
 * registry's: in sync, nothing is sent. Different, at the revision this
 * SRD last sent it: its table is wrong, it gets the full table. At
 * another revision, pushes are on their way to it and the two cannot be
 * compared: wait for the next digest, but not more than
 * DIGEST_BEHIND_MAX times in a row.
 *
 * On a shared store the registry's table may be listed at a revision
 * after the one pushed (another SRD's change, its watch event not yet
 * here): then a difference is no evidence. Read and push those changes
 * now; if there were any, they are on their way to the SR (deferred);
 * if there were none, the table listed is the one pushed and the
 * comparison stands; if they could not be read, nothing can be told.
 */
static void digest_check(struct srd_role *r, struct srd_peer *p,
			 const struct msg_reg *g)
{
	const char *node = conn_peer(p->c)->node;
	char err[256];
	int ahead = 0;

	p->digests++;
	r->digests++;
	if (!p->synced) {
		/* its table did not go (the store failed, a limit): a sync */
		sync_peer(r, p, 1);
		return;
	}
	push_now(r, 0);		/* what it is compared with is what it was sent */
	if (table_digest(r, err, sizeof(err))) {
		agent_log("srd: digest of the registry: %s", err);
		return;
	}
	if (!strcmp(g->sha256, r->dg)) {
		r->digests_matched++;
		p->behind = 0;
		return;
	}
	if (r->dg_rev > r->pushed && (ahead = push_now(r, 1)) < 0) {
		r->digests_deferred++;
		return;		/* the store did not answer: the next digest */
	}
	if (ahead || g->rev != p->sent_rev) {
		/*
		 * Not compared: deferred; after DIGEST_BEHIND_MAX in a row the
		 * full table anyway. That is no table found wrong (digests
		 * queued behind a store call that stalled the loop come in a
		 * row too), so not a mismatch.
		 */
		r->digests_deferred++;
		if (++p->behind < DIGEST_BEHIND_MAX)
			return;
		if (!full_allowed(r, p))
			return;		/* counted there, not as forced */
		r->digests_forced++;
		agent_log("srd: %s's digests at revision %llu could not be compared %u times in a row (sent it %llu): the full table",
			  node, (unsigned long long)g->rev, p->behind,
			  (unsigned long long)p->sent_rev);
		send_full(r, p, FULL_ONE);
		return;
	}
	if (!full_allowed(r, p))
		return;		/* counted there; the next digest after the gap */
	r->digest_mismatches++;
	agent_log("srd: %s's table at revision %llu differs from the registry's at %llu (sent it %llu): the full table",
		  node, (unsigned long long)g->rev, (unsigned long long)r->dg_rev,
		  (unsigned long long)p->sent_rev);
	send_full(r, p, FULL_ONE);
}

/* --- type 1 in ------------------------------------------------------------ */

static int from_msg(const struct msg_instance *m, struct srd_instance *i,
		    char *err, size_t errlen)
{
	int st = srd_state_parse(m->state);

	memset(i, 0, sizeof(*i));
	if (st < 0) {
		snprintf(err, errlen, "instance.state: \"%s\" is not pending, active or faulted",
			 m->state);
		return -1;
	}
	snprintf(i->id, sizeof(i->id), "%s", m->id);
	snprintf(i->node, sizeof(i->node), "%s", m->node);
	snprintf(i->sid, sizeof(i->sid), "%s", m->sid);
	snprintf(i->prefix, sizeof(i->prefix), "%s", m->prefix);
	snprintf(i->rtype, sizeof(i->rtype), "%s", m->rtype);
	i->capability = m->capability;
	i->state = (enum srd_state)st;
	i->ttl_ms = m->ttl_ms;
	return srd_instance_check(i, err, errlen);
}

static void registration(struct srd_role *r, struct srd_peer *p,
			 const struct msg_reg *g)
{
	const char *node = conn_peer(p->c)->node;
	struct srd_store *st = r->st;
	struct srd_instance i;
	char err[256];
	uint64_t rev;
	int rc = 0;

	/*
	 * A gateway reads the table (sync, digest); only an SR speaks for
	 * the instances of its node.
	 */
	if (!(conn_peer(p->c)->roles & ROLE_SR) && g->op != REG_SYNC &&
	    g->op != REG_DIGEST) {
		snprintf(err, sizeof(err), "type 1 %s from %s: only an sr registers instances",
			 msg_reg_op_name(g->op), node);
		reject_note(&r->a->rej, "role", node, err);
		return;
	}
	switch (g->op) {
	case REG_REGISTER:
		rc = from_msg(&g->inst, &i, err, sizeof(err)) ||
		     st->ops->put(st, &i, agent_now_ms(), &rev, err, sizeof(err));
		if (!rc) {
			r->registered++;
			changed(r);
		}
		break;
	case REG_RENEW:
		rc = st->ops->renew(st, g->id, node, agent_now_ms(), err,
				    sizeof(err));
		if (!rc)
			r->renewed++;
		break;
	case REG_DEREGISTER:
		rc = st->ops->del(st, g->id, node, &rev, err, sizeof(err));
		if (!rc) {
			r->deregistered++;
			changed(r);
		}
		break;
	case REG_SYNC:
		agent_log("srd: %s asks for the full table (it is at %llu)", node,
			  (unsigned long long)g->since);
		sync_peer(r, p, 1);
		break;
	case REG_DIGEST:
		digest_check(r, p, g);
		break;
	}
	if (rc)
		reject_note(&r->a->rej, strstr(err, "is registered on node") ?
			    "owner" : "registry", node, err);
}

/* --- connections -------------------------------------------------------- */

static void peer_free(struct srd_role *r, struct srd_peer *p)
{
	struct srd_peer **pp;

	for (pp = &r->peers; *pp && *pp != p; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = p->next;
	free(p);
}

static int on_up(struct conn *c, void *arg)
{
	struct srd_peer *p = arg;
	char roles[32];

	p->up = 1;
	agent_log("srd: %s [%s] connected", conn_peer(c)->node,
		  peer_roles_text(conn_peer(c)->roles, roles, sizeof(roles)));
	/* the gateways keep the route table as the SRs do */
	if (conn_peer(c)->roles & (ROLE_SR | ROLE_MG))
		sync_peer(p->r, p, 0);
	if ((conn_peer(c)->roles & ROLE_SR) && p->r->a->smo)
		smo_role_peer_up(p->r->a->smo, c);
	/* the verifiers get the AAM's revoked list */
	if ((conn_peer(c)->roles & (ROLE_SR | ROLE_MG)) && p->r->a->aam)
		aam_role_peer_up(p->r->a->aam, c);
	return 0;
}

static int on_frame(struct conn *c, const unsigned char *payload, size_t len,
		    void *arg)
{
	struct srd_peer *p = arg;
	struct smo_role *smo = p->r->a->smo;
	struct aam_role *aam = p->r->a->aam;
	struct msg m;

	/*
	 * the SRs' QoS and node state reports ride the same connection, for
	 * the smo, and their token requests, for the aam
	 */
	if (agent_msg_accept(p->r->a, c, payload, len, MSG_BIT(MSG_REGISTRATION) |
			     (smo ? MSG_BIT(MSG_QOS_REPORT) | MSG_BIT(MSG_NODE_STATE) : 0) |
			     (aam ? MSG_BIT(MSG_AUTH) : 0),
			     &m))
		return 0;
	if (m.type->type == MSG_AUTH)
		aam_role_frame(aam, c, &m);
	else if (m.type->type == MSG_QOS_REPORT)
		smo_role_qos(smo, &m, payload, len);
	else if (m.type->type == MSG_NODE_STATE)
		smo_role_node(smo, &m, payload, len);
	else
		registration(p->r, p, m.body);
	msg_free(&m);
	return 0;
}

static void on_down(struct conn *c, const char *why, void *arg)
{
	struct srd_peer *p = arg;

	agent_conn_down(p->r->a, c, p->up, "srd", why);
	if (p->r->a->smo)
		smo_role_peer_down(p->r->a->smo, c);
	if (p->r->a->aam)
		aam_role_peer_down(p->r->a->aam, c);
	peer_free(p->r, p);
}

static const struct conn_ops srd_conn_ops = { on_up, on_frame, on_down };

static void on_accept(struct evconnlistener *l, evutil_socket_t fd,
		      struct sockaddr *sa, int salen, void *arg)
{
	struct srd_role *r = arg;
	struct srd_peer *p = calloc(1, sizeof(*p));

	(void)l;
	(void)sa;
	(void)salen;
	if (!p) {
		close(fd);
		return;
	}
	p->r = r;
	p->c = conn_new(r->a->base, r->a->tls_server, 1, fd, NULL, 0, NULL, 0,
			&srd_conn_ops, p);
	if (!p->c) {
		close(fd);
		free(p);
		return;
	}
	p->next = r->peers;
	r->peers = p;
}

/* --- timers ----------------------------------------------------------- */

static int count_expired(const struct srd_change *c, void *arg)
{
	struct srd_role *r = arg;

	agent_log("srd: %s of node %s expired", c->inst.id, c->inst.node);
	r->expired++;
	return 0;
}

static void on_expire(evutil_socket_t fd, short what, void *arg)
{
	struct srd_role *r = arg;
	uint64_t before = r->expired;
	char err[256];

	(void)fd;
	(void)what;
	if (r->st->ops->expire(r->st, agent_now_ms(), count_expired, r, err,
			       sizeof(err)))
		agent_log("srd: expiry: %s", err);
	if (r->expired != before)
		push_now(r, 0);
	retry_fulls(r);
}

static void on_full(evutil_socket_t fd, short what, void *arg)
{
	struct srd_role *r = arg;

	(void)fd;
	(void)what;
	push_now(r, 0);
	send_full(r, NULL, FULL_PERIODIC);
}

/* --- the role ------------------------------------------------------------ */

struct srd_role *srd_role_start(struct agent *a)
{
	const struct srd_config *cfg = &a->cfg.srd;
	struct timeval ex = { 0, EXPIRE_CHECK_MS * 1000 };
	struct timeval full = { cfg->full_interval_ms / 1000,
				cfg->full_interval_ms % 1000 * 1000 };
	struct sockaddr_storage sa;
	struct srd_role *r;
	socklen_t len;
	char err[256];

	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->a = a;
	r->peer_backlog = PEER_BACKLOG;
	r->wake_fd[0] = r->wake_fd[1] = -1;
	if (cfg->etcd[0])
		r->st = srd_store_etcd_open(cfg->etcd, NULL, agent_now_ms(), err,
					    sizeof(err));
	else
		r->st = srd_store_sqlite_open(cfg->sqlite, SRD_LOG_KEEP,
					      agent_now_ms(), err, sizeof(err));
	if (!r->st) {
		agent_log("srd: store %s: %s", cfg->etcd[0] ? cfg->etcd : cfg->sqlite,
			  err);
		goto fail;
	}
	r->pushed = r->st->ops->revision(r->st);
	config_addr_parse(cfg->listen, &sa, &len);
	r->ln = evconnlistener_new_bind(a->base, on_accept, r,
					LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE |
					LEV_OPT_CLOSE_ON_EXEC, 128,
					(struct sockaddr *)&sa, (int)len);
	if (!r->ln) {
		agent_log("srd: listen %s: %s", cfg->listen, strerror(errno));
		goto fail;
	}
	r->expire_ev = event_new(a->base, -1, EV_PERSIST, on_expire, r);
	r->full_ev = event_new(a->base, -1, EV_PERSIST, on_full, r);
	r->push_ev = event_new(a->base, -1, 0, on_push, r);
	if (!r->expire_ev || !r->full_ev || !r->push_ev)
		goto fail;
	event_add(r->expire_ev, &ex);
	event_add(r->full_ev, &full);
	/* a store other SRDs write (etcd): their changes pushed at once */
	if (r->st->ops->watch) {
		if (pipe2(r->wake_fd, O_NONBLOCK | O_CLOEXEC)) {
			agent_log("srd: pipe: %s", strerror(errno));
			goto fail;
		}
		r->watch_ev = event_new(a->base, r->wake_fd[0], EV_READ | EV_PERSIST,
					on_watch, r);
		if (!r->watch_ev || event_add(r->watch_ev, NULL))
			goto fail;
		if (r->st->ops->watch(r->st, watch_wake, r, err, sizeof(err))) {
			agent_log("srd: store %s: %s", cfg->etcd, err);
			goto fail;
		}
	}
	agent_log("srd: serving on %s, store %s (%s), revision %llu", cfg->listen,
		  r->st->ops->name, cfg->etcd[0] ? cfg->etcd : cfg->sqlite,
		  (unsigned long long)r->pushed);
	return r;
fail:
	srd_role_stop(r);
	return NULL;
}

void srd_role_stop(struct srd_role *r)
{
	if (!r)
		return;
	while (r->peers) {
		struct srd_peer *p = r->peers;

		conn_close(p->c);
		peer_free(r, p);
	}
	if (r->ln)
		evconnlistener_free(r->ln);
	if (r->expire_ev)
		event_free(r->expire_ev);
	if (r->full_ev)
		event_free(r->full_ev);
	if (r->push_ev)
		event_free(r->push_ev);
	/* the store first: its watcher thread may still write the pipe */
	if (r->st) {
		r->st->ops->close(r->st);
		r->st = NULL;
	}
	if (r->watch_ev)
		event_free(r->watch_ev);
	if (r->wake_fd[0] >= 0)
		close(r->wake_fd[0]);
	if (r->wake_fd[1] >= 0)
		close(r->wake_fd[1]);
	free(r);
}

static int show_inst(const struct srd_instance *i, void *arg)
{
	struct json_object *o = srd_instance_json(i);

	json_object_object_add(o, "rev", json_object_new_uint64(i->mod_rev));
	json_object_array_add(arg, o);
	return 0;
}

struct json_object *srd_role_show(struct srd_role *r, const char *what)
{
	struct json_object *o = json_object_new_object(), *arr;
	char err[256];
	uint64_t rev = 0;

	if (!strcmp(what, "instances")) {
		arr = json_object_new_array();
		if (r->st->ops->list(r->st, show_inst, arr, &rev, err, sizeof(err)))
			agent_log("srd: show instances: %s", err);
		json_object_object_add(o, "revision", json_object_new_uint64(rev));
		json_object_object_add(o, "instances", arr);
		json_object_object_add(o, "registered", json_object_new_uint64(r->registered));
		json_object_object_add(o, "renewed", json_object_new_uint64(r->renewed));
		json_object_object_add(o, "deregistered", json_object_new_uint64(r->deregistered));
		json_object_object_add(o, "expired", json_object_new_uint64(r->expired));
	} else if (!strcmp(what, "peers")) {
		arr = json_object_new_array();
		for (struct srd_peer *p = r->peers; p; p = p->next) {
			struct json_object *x;
			char roles[32];

			if (!p->up)
				continue;
			x = json_object_new_object();
			json_object_object_add(x, "node", json_object_new_string(conn_peer(p->c)->node));
			json_object_object_add(x, "roles", json_object_new_string(
				peer_roles_text(conn_peer(p->c)->roles, roles, sizeof(roles))));
			json_object_object_add(x, "synced", json_object_new_boolean(p->synced));
			json_object_object_add(x, "messages", json_object_new_uint64(p->msgs));
			json_object_object_add(x, "digests", json_object_new_uint64(p->digests));
			json_object_array_add(arr, x);
		}
		json_object_object_add(o, "revision", json_object_new_uint64(r->pushed));
		json_object_object_add(o, "pushes", json_object_new_uint64(r->pushes));
		json_object_object_add(o, "full_tables", json_object_new_uint64(r->fulls));
		json_object_object_add(o, "watch_wakes", json_object_new_uint64(r->watch_wakes));
		json_object_object_add(o, "digests", json_object_new_uint64(r->digests));
		json_object_object_add(o, "digests_matched", json_object_new_uint64(r->digests_matched));
		json_object_object_add(o, "digest_mismatches", json_object_new_uint64(r->digest_mismatches));
		json_object_object_add(o, "digests_deferred", json_object_new_uint64(r->digests_deferred));
		json_object_object_add(o, "digests_forced", json_object_new_uint64(r->digests_forced));
		json_object_object_add(o, "fulls_limited", json_object_new_uint64(r->fulls_limited));
		json_object_object_add(o, "fulls_backlogged", json_object_new_uint64(r->fulls_backlogged));
		json_object_object_add(o, "fulls_failed", json_object_new_uint64(r->fulls_failed));
		json_object_object_add(o, "pushes_overlapped", json_object_new_uint64(r->pushes_overlapped));
		json_object_object_add(o, "peers_backlogged", json_object_new_uint64(r->peers_backlogged));
		json_object_object_add(o, "peers", arr);
	}
	return o;
}

static int count_inst(const struct srd_instance *i, void *arg)
{
	(void)i;
	(*(uint64_t *)arg)++;
	return 0;
}

struct json_object *srd_role_backup(struct srd_role *r, const char *name,
				    char *err, size_t errlen)
{
	struct json_object *o;
	uint64_t rev = 0, n = 0;
	char path[4400];

	if (!r->st->ops->backup) {
		snprintf(err, errlen, "backup: the %s store is backed up by its own tool (etcdctl snapshot save)",
			 r->st->ops->name);
		return NULL;
	}
	/* what the copy holds: nothing runs between the two on this loop */
	if (r->st->ops->list(r->st, count_inst, &n, &rev, err, errlen) ||
	    r->st->ops->backup(r->st, name, path, sizeof(path), err, errlen))
		return NULL;
	agent_log("srd: backup of the registry at revision %llu (%llu instances) in %s",
		  (unsigned long long)rev, (unsigned long long)n, path);
	o = json_object_new_object();
	json_object_object_add(o, "file", json_object_new_string(path));
	json_object_object_add(o, "revision", json_object_new_uint64(rev));
	json_object_object_add(o, "instances", json_object_new_uint64(n));
	return o;
}

#ifdef DMSC_TEST_HOOKS
/* test_roles: the next @n full tables cannot be listed (a store down). */
void srd_role_test_fail_list(struct srd_role *r, unsigned int n)
{
	r->test_fail_list = n;
	agent_log("srd: test hook: the next %u full tables fail", n);
}

/* test_roles: a peer is set aside at @bytes unsent (0: PEER_BACKLOG). */
void srd_role_test_peer_backlog(struct srd_role *r, size_t bytes)
{
	r->peer_backlog = bytes ? bytes : PEER_BACKLOG;
	agent_log("srd: test hook: peers are set aside at %zu bytes unsent",
		  r->peer_backlog);
}
#endif
