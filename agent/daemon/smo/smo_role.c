// SPDX-License-Identifier: GPL-2.0
/*
 * The smo role, minimal: the policies the operator wants (tunnels with
 * their rules, per target SR node; msg_policy.h), from smo.policies at
 * start and changed through the control socket (apply, withdraw), pushed
 * to the SRs as type 6.
 *
 * It pushes over the connections the SRs open to the srd role of the
 * same agent (config.c refuses smo without srd): an SR already dials its
 * controller, with failover between controllers and a backoff, and
 * checks each message's type against the sender certificate's roles, so
 * a second connection (or the SMO dialling every SR) would add a listener
 * on every node and nothing to the security. Each SR gets the whole set
 * of its node: when it connects ("full"), and after every change (the
 * revision one more), whether or not its part changed, so that a gap in
 * revisions at an SR is a lost message and not another node's change.
 *
 * Where the registry is in etcd (srd.store.etcd), several controllers
 * share it and their SMOs elect a leader (srd/election.h): a step every
 * third of the lease, in a thread (smo_elect.h) that wakes this loop
 * with what it learnt, so that an etcd member that does not answer
 * holds that thread and not the loop. An SR talks to one controller, not
 * necessarily the leader's: so the leader does not push its set itself
 * but writes it to etcd (smo_relay.h), only while the seat is its own,
 * and every SMO, leader or follower, pushes what etcd holds to the SRs
 * of its srd, with the write's etcd revision as the term an SR orders
 * pushes by. A new leadership's set goes "full", which an SR takes
 * whatever its revision, so that the SRs converge on the new leader's
 * set. A follower keeps its own set (file, apply) and its revisions;
 * no one pushes them. With SQLite there is one controller: it always
 * leads and pushes its own set, without a term.
 *
 * Changes made at run time last until the agent restarts; then the
 * policy file is the set again.
 */
#define _GNU_SOURCE	/* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "election.h"
#include "json_strict.h"
#include "log.h"
#include "msg_policy.h"
#include "smo_elect.h"
#include "smo_qos.h"
#include "smo_relay.h"

/* the loop's lateness timer (smo_election's late_max_ms) */
#define LATE_TICK_MS	100

struct smo_peer {
	struct conn *c;
	uint64_t pushes;
	struct smo_peer *next;
};

struct smo_role {
	struct agent *a;
	struct policy *p;
	size_t n;
	uint64_t rev;
	struct smo_peer *peers;
	uint64_t pushes, applied, withdrawn;
	struct smo_qos *qos;		/* the SRs' type-5 reports */
	struct smo_qos *nodes;		/* ... and type-4 ones */
	struct smo_election *el;	/* NULL: no etcd, we always lead */
};

enum smo_seat { SEAT_FOLLOWER, SEAT_LEADER, SEAT_UNKNOWN };

static const char *const seat_names[] = { "follower", "leader", "unknown" };

/* The SMO's side of the election: what the last step said, and counts. */
struct smo_election {
	struct election *el;
	struct smo_elect *th;		/* its thread: steps and writes */
	int wake_fd[2];			/* the thread writes, the loop reads */
	struct event *wake;
	enum smo_seat seat;
	char leader[64];		/* as the last step named it */
	char error[160];		/* of the last step that failed */
	int64_t since_ms;		/* the seat's last change */
	uint64_t steps, won, lost, errors, withheld;
	struct smo_relay *relay;	/* the set etcd holds, to our SRs */
	uint64_t writes, write_failures, relayed, too_large;
	uint64_t handed;		/* values handed to the thread */
	uint64_t done;			/* ... written or dropped, as it said */
	char write_error[160];
	/*
	 * How late a LATE_TICK_MS timer on the loop fired, at most: what
	 * anything on the loop (an etcd call made on it) held it up.
	 */
	struct event *late;
	int64_t late_due, late_max_ms;
};

static int64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000ll + t.tv_nsec / 1000000;
}

/*
 * May this SMO push now? The last step must have said we lead, and our
 * lease must not have run out since (election_leading() needs no etcd).
 */
static bool smo_leading(struct smo_role *r)
{
	return !r->el || (r->el->seat == SEAT_LEADER &&
			  election_leading(r->el->el));
}

/*
 * The policies of the SR's node: with etcd, those of the set etcd holds,
 * at its leader's revision and with its term, whoever leads (none yet:
 * nothing); with SQLite, ours at our revision.
 */
static void push_one(struct smo_role *r, struct smo_peer *sp, bool full)
{
	const char *node = conn_peer(sp->c)->node;
	struct msg_policy m = { .rev = r->rev, .full = full };
	const struct policy *set = r->p;
	size_t n = r->n;
	struct policy *mine;

	if (r->el) {
		const struct smo_set *rs = smo_relay_set(r->el->relay);

		if (!rs)
			return;
		set = rs->p;
		n = rs->n;
		m.rev = rs->rev;
		m.term = rs->term;
		m.epoch = rs->epoch;
	}
	mine = calloc(n ? n : 1, sizeof(*mine));
	if (!mine)
		return;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(set[i].node, node))
			mine[m.n++] = set[i];
	m.p = mine;
	if (!agent_msg_send(r->a, sp->c, &msg_policy_type, &m)) {
		sp->pushes++;
		r->pushes++;
		if (r->el)
			r->el->relayed++;
	}
	free(mine);
}

static void push_all(struct smo_role *r, bool full)
{
	for (struct smo_peer *sp = r->peers; sp; sp = sp->next)
		push_one(r, sp, full);
}

/* A newer set in etcd (read, or our own write): to every SR of our srd. */
static void on_relayed(void *arg, bool full)
{
	push_all(arg, full);
}

/* Is the set etcd holds ours, as it is now, of this leadership? */
static bool published(struct smo_role *r)
{
	const struct smo_set *rs = smo_relay_set(r->el->relay);

	return rs && !strcmp(rs->leader, r->a->cfg.node) && rs->rev == r->rev &&
	       rs->seat == (uint64_t)election_seat_revision(r->el->el);
}

/*
 * @p[@n] as the leader would write it: its size in etcd, over
 * smo.relay_max_bytes or not (etcd refuses a request above 1.5 MiB by
 * default, and a set it refused would leave the SRs on the one before
 * while the leader retried at every step). The seat at its widest.
 */
static int too_large(struct smo_role *r, const struct policy *p, size_t n,
		     uint64_t rev, size_t *size)
{
	char *value = smo_relay_value(r->a->cfg.node, UINT64_MAX, rev, p, n);

	*size = value ? strlen(value) : SIZE_MAX;
	free(value);
	return *size > r->a->cfg.smo.relay_max_bytes;
}

/*
 * The leader's set to etcd, only while the seat is ours (election_put,
 * made by the election's thread): on success it is relayed at once, not
 * when the watch brings it back (written()). A failure is counted and
 * left to the next step, which tries again.
 */
static void publish(struct smo_role *r)
{
	struct smo_election *e = r->el;
	uint64_t seat = (uint64_t)election_seat_revision(e->el);
	char *value = smo_relay_value(r->a->cfg.node, seat, r->rev, r->p, r->n);

	if (!value) {
		e->write_failures++;
		snprintf(e->write_error, sizeof(e->write_error), "out of memory");
		return;
	}
	/* apply refuses such a set; this one is the policy file's, or a bug */
	if (strlen(value) > r->a->cfg.smo.relay_max_bytes) {
		e->too_large++;
		snprintf(e->write_error, sizeof(e->write_error),
			 "revision %llu: %zu bytes, over smo.relay_max_bytes (%u)",
			 (unsigned long long)r->rev, strlen(value),
			 r->a->cfg.smo.relay_max_bytes);
		agent_log("smo: relay: %s: not written; etcd keeps the set before",
			  e->write_error);
		free(value);
		return;
	}
	e->handed++;
	smo_elect_write(e->th, r->a->cfg.smo.policies_key, value);
}

/* The thread's write ended: relayed at once if it was made. */
static void written(struct smo_role *r, struct smo_elect_state *st)
{
	struct smo_election *e = r->el;

	if (st->put_rc == 1) {
		e->writes++;
		smo_relay_take(e->relay, st->term, st->epoch, st->value);
	} else {
		e->write_failures++;
		snprintf(e->write_error, sizeof(e->write_error), "%s", st->put_error);
		agent_log("smo: relay: a set not written to %s: %s",
			  r->a->cfg.smo.policies_key, st->put_error);
	}
	free(st->value);
	st->value = NULL;
}

/* Our set changed: pushed (SQLite), written (etcd, leading), or held back. */
static void set_changed(struct smo_role *r)
{
	if (!r->el) {
		push_all(r, false);
		return;
	}
	if (!smo_leading(r)) {
		r->el->withheld++;
		return;
	}
	publish(r);
}

static void seat_set(struct smo_role *r, enum smo_seat seat)
{
	struct smo_election *e = r->el;

	if (seat == e->seat)
		return;
	e->lost += e->seat == SEAT_LEADER;
	e->won += seat == SEAT_LEADER;
	agent_log("smo: election: %s, was %s; leader %s%s%s", seat_names[seat],
		  seat_names[e->seat], e->leader[0] ? e->leader : "none",
		  seat == SEAT_UNKNOWN ? ": " : "",
		  seat == SEAT_UNKNOWN ? e->error : "");
	e->seat = seat;
	e->since_ms = agent_now_ms();
}

/*
 * The election's thread says it made a step or a write (smo_elect.h):
 * the seat, the write's outcome, and whether to write our set. Nothing
 * here waits on etcd.
 */
static void on_elect(evutil_socket_t fd, short what, void *arg)
{
	struct smo_role *r = arg;
	struct smo_election *e = r->el;
	struct smo_elect_state st;
	char buf[64];

	(void)what;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	smo_elect_take(e->th, &st);
	e->done = st.done;
	if (st.written)
		written(r, &st);
	if (st.steps != e->steps) {
		e->steps = st.steps;
		e->errors = st.errors;
		if (st.rc < 0)
			snprintf(e->error, sizeof(e->error), "%s", st.error);
		/* a follower's leader changed: whose set the SRs now get */
		if (st.rc == 0 && e->seat == SEAT_FOLLOWER && strcmp(st.leader, e->leader))
			agent_log("smo: election: follower; leader %s, was %s",
				  st.leader[0] ? st.leader : "none",
				  e->leader[0] ? e->leader : "none");
		memcpy(e->leader, st.leader, sizeof(e->leader));
		/* "unknown" stops the writes as "follower" does: etcd may have moved on */
		seat_set(r, st.rc < 0 ? SEAT_UNKNOWN : st.rc ? SEAT_LEADER : SEAT_FOLLOWER);
	}
	/*
	 * Leading, and etcd does not hold our set of this leadership (the
	 * seat just won, a change withheld or a write failed, the key
	 * deleted), and no write is under way: write it. Every SMO relays
	 * it, as a new leadership's whole set ("full").
	 */
	if (!smo_leading(r) || published(r) || e->handed != e->done)
		return;
	agent_log("smo: leading: the whole set (revision %llu) to %s",
		  (unsigned long long)r->rev, r->a->cfg.smo.policies_key);
	publish(r);
}

/* From the election's thread: one byte, whatever the pipe holds. */
static void elect_wake(void *arg)
{
	struct smo_election *e = arg;
	ssize_t n = write(e->wake_fd[1], "w", 1);

	(void)n;	/* full (EAGAIN): a wake-up is pending anyway */
}

/* The lateness timer: how much later than due it fired. */
static void on_late(evutil_socket_t fd, short what, void *arg)
{
	struct smo_election *e = arg;
	int64_t now = mono_ms();

	(void)fd;
	(void)what;
	if (e->late_due && now - e->late_due > e->late_max_ms)
		e->late_max_ms = now - e->late_due;
	e->late_due = now + LATE_TICK_MS;
}

/* The thread campaigns at once, then steps every third of the lease. -1 (logged). */
static int election_start(struct smo_role *r)
{
	const struct agent_config *cfg = &r->a->cfg;
	struct timeval late = { 0, LATE_TICK_MS * 1000 };
	struct smo_election *e = calloc(1, sizeof(*e));
	char err[256];

	if (!e)
		return -1;
	r->el = e;
	e->wake_fd[0] = e->wake_fd[1] = -1;
	e->seat = SEAT_UNKNOWN;
	e->since_ms = agent_now_ms();
	e->el = election_open(cfg->srd.etcd, cfg->smo.election_key, cfg->node,
			      (int)cfg->smo.election_lease_s, err, sizeof(err));
	if (!e->el) {
		agent_log("smo: %s", err);
		return -1;
	}
	e->late = event_new(r->a->base, -1, EV_PERSIST, on_late, e);
	if (pipe2(e->wake_fd, O_NONBLOCK | O_CLOEXEC) ||
	    !(e->wake = event_new(r->a->base, e->wake_fd[0], EV_READ | EV_PERSIST,
				  on_elect, r)) ||
	    event_add(e->wake, NULL) || !e->late || evtimer_add(e->late, &late)) {
		agent_log("smo: election: no pipe or event");
		return -1;
	}
	e->relay = smo_relay_start(r->a->base, cfg->srd.etcd, cfg->smo.policies_key,
				   on_relayed, r, err, sizeof(err));
	if (!e->relay) {
		agent_log("smo: relay: %s", err);
		return -1;
	}
	e->th = smo_elect_start(e->el, cfg->smo.election_lease_s * 1000 / 3,
				elect_wake, e, err, sizeof(err));
	if (!e->th) {
		agent_log("smo: %s", err);
		return -1;
	}
	agent_log("smo: election on %s, key %s, lease %u s; the leader's set at %s",
		  cfg->srd.etcd, cfg->smo.election_key, cfg->smo.election_lease_s,
		  cfg->smo.policies_key);
	return 0;
}

/* Step down on a clean stop: the next SMO need not wait out our lease. */
static void election_stop(struct smo_role *r)
{
	struct smo_election *e = r->el;

	if (!e)
		return;
	/* the thread first (at most its call under way): the election is ours again */
	smo_elect_stop(e->th);
	if (e->wake)
		event_free(e->wake);
	if (e->late)
		event_free(e->late);
	if (e->wake_fd[0] >= 0)
		close(e->wake_fd[0]);
	if (e->wake_fd[1] >= 0)
		close(e->wake_fd[1]);
	smo_relay_stop(e->relay);
	if (e->el) {
		if (e->seat == SEAT_LEADER)
			agent_log("smo: election: resigning");
		election_resign(e->el);
		election_close(e->el);
	}
	free(e);
	r->el = NULL;
}

static struct json_object *election_show(struct smo_role *r)
{
	struct json_object *o = json_object_new_object();
	struct smo_election *e = r->el;

	if (!e) {
		/* SQLite: one controller, no election, always the leader */
		json_object_object_add(o, "seat", json_object_new_string("leader"));
		json_object_object_add(o, "leader", json_object_new_string(r->a->cfg.node));
		json_object_object_add(o, "elected", json_object_new_boolean(0));
		return o;
	}
	json_object_object_add(o, "seat", json_object_new_string(
		smo_leading(r) ? "leader" : e->seat == SEAT_LEADER ?
		"unknown" : seat_names[e->seat]));
	json_object_object_add(o, "leader", json_object_new_string(e->leader));
	json_object_object_add(o, "elected", json_object_new_boolean(1));
	json_object_object_add(o, "key", json_object_new_string(r->a->cfg.smo.election_key));
	json_object_object_add(o, "lease_s", json_object_new_uint64(r->a->cfg.smo.election_lease_s));
	json_object_object_add(o, "seat_ms", json_object_new_int64(agent_now_ms() - e->since_ms));
	json_object_object_add(o, "terms_won", json_object_new_uint64(e->won));
	json_object_object_add(o, "terms_lost", json_object_new_uint64(e->lost));
	json_object_object_add(o, "steps", json_object_new_uint64(e->steps));
	json_object_object_add(o, "errors", json_object_new_uint64(e->errors));
	json_object_object_add(o, "withheld", json_object_new_uint64(e->withheld));
	json_object_object_add(o, "last_error", json_object_new_string(e->error));
	json_object_object_add(o, "loop_late_max_ms", json_object_new_int64(e->late_max_ms));
	return o;
}

/* With etcd: the set this SMO relays (whoever wrote it) and our writes. */
static struct json_object *relay_show(struct smo_role *r)
{
	struct smo_election *e = r->el;
	struct json_object *o;

	if (!e || !e->relay)
		return NULL;
	o = smo_relay_show(e->relay);
	json_object_object_add(o, "writes", json_object_new_uint64(e->writes));
	json_object_object_add(o, "write_failures", json_object_new_uint64(e->write_failures));
	json_object_object_add(o, "too_large", json_object_new_uint64(e->too_large));
	json_object_object_add(o, "last_write_error", json_object_new_string(e->write_error));
	json_object_object_add(o, "relayed", json_object_new_uint64(e->relayed));
	return o;
}

void smo_role_peer_up(struct smo_role *r, struct conn *c)
{
	struct smo_peer *sp = calloc(1, sizeof(*sp));

	if (!sp)
		return;
	sp->c = c;
	sp->next = r->peers;
	r->peers = sp;
	push_one(r, sp, true);
}

void smo_role_peer_down(struct smo_role *r, struct conn *c)
{
	for (struct smo_peer **pp = &r->peers; *pp; pp = &(*pp)->next)
		if ((*pp)->c == c) {
			struct smo_peer *sp = *pp;

			*pp = sp->next;
			free(sp);
			return;
		}
}

/* @p[@n] as the set: names unique, one policy per tunnel id and node. */
static int set_check(const struct policy *p, size_t n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(p[i].name, p[j].name)) {
				snprintf(err, errlen, "policy %s: named twice", p[i].name);
				return -1;
			}
			if (p[i].tunnel == p[j].tunnel && !strcmp(p[i].node, p[j].node)) {
				snprintf(err, errlen, "policy %s: tunnel %u on %s is policy %s's",
					 p[i].name, p[i].tunnel, p[i].node, p[j].name);
				return -1;
			}
		}
	return 0;
}

int smo_role_apply(struct smo_role *r, struct json_object *doc, char *err,
		   size_t errlen)
{
	static const char *const keys[] = { "policies", NULL };
	struct policy *in, *set;
	struct json_object *arr;
	size_t nin, n, size;

	if (!json_object_is_type(doc, json_type_object)) {
		snprintf(err, errlen, "expected { \"policies\": [ ... ] }");
		return -1;
	}
	if (msg_keys_only(doc, "", keys, NULL, err, errlen) ||
	    msg_get_array(doc, "", "policies", MSG_POLICIES_MAX, &arr, err, errlen) ||
	    policy_array_parse(arr, "policies", &in, &nin, err, errlen))
		return -1;
	set = malloc((r->n + nin + 1) * sizeof(*set));
	if (!set) {
		free(in);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* a policy of the same name is replaced, a new one added */
	if (r->n)
		memcpy(set, r->p, r->n * sizeof(*set));
	n = r->n;
	for (size_t i = 0; i < nin; i++) {
		size_t k;

		for (k = 0; k < n && strcmp(set[k].name, in[i].name); k++)
			;
		set[k] = in[i];
		if (k == n)
			n++;
	}
	free(in);
	if (set_check(set, n, err, errlen)) {
		free(set);
		return -1;
	}
	if (r->el && too_large(r, set, n, r->rev + 1, &size)) {
		/* refused whole: the set before stays, here and in etcd */
		r->el->too_large++;
		snprintf(err, errlen,
			 "policies: the set would be %zu bytes in etcd, over smo.relay_max_bytes (%u)",
			 size, r->a->cfg.smo.relay_max_bytes);
		agent_log("smo: apply refused: %s", err);
		free(set);
		return -1;
	}
	free(r->p);
	r->p = set;
	r->n = n;
	r->rev++;
	r->applied += nin;
	agent_log("smo: %zu policies applied, %zu in all, revision %llu", nin, n,
		  (unsigned long long)r->rev);
	set_changed(r);
	return 0;
}

int smo_role_withdraw(struct smo_role *r, const char *name, char *err,
		      size_t errlen)
{
	size_t k;

	for (k = 0; k < r->n && strcmp(r->p[k].name, name); k++)
		;
	if (k == r->n) {
		snprintf(err, errlen, "name: no policy %s", name);
		return -1;
	}
	memmove(&r->p[k], &r->p[k + 1], (r->n - k - 1) * sizeof(*r->p));
	r->n--;
	r->rev++;
	r->withdrawn++;
	agent_log("smo: policy %s withdrawn, revision %llu", name,
		  (unsigned long long)r->rev);
	set_changed(r);
	return 0;
}

struct smo_role *smo_role_start(struct agent *a)
{
	struct smo_role *r = calloc(1, sizeof(*r));
	struct json_object *doc;
	char err[320];
	size_t size;

	if (!r)
		return NULL;
	r->a = a;
	r->qos = smo_qos_new("QoS report");
	r->nodes = smo_qos_new("node state report");
	if (!r->qos || !r->nodes) {
		smo_qos_free(r->qos);
		smo_qos_free(r->nodes);
		free(r);
		return NULL;
	}
	if (a->cfg.smo.policies[0]) {
		doc = json_strict_load(a->cfg.smo.policies, err, sizeof(err));
		if (!doc || smo_role_apply(r, doc, err, sizeof(err))) {
			agent_log("smo: %s: %s", a->cfg.smo.policies, err);
			json_object_put(doc);
			smo_qos_free(r->qos);
			smo_qos_free(r->nodes);
			free(r->p);
			free(r);
			return NULL;
		}
		json_object_put(doc);
	}
	agent_log("smo: %zu policies at revision %llu", r->n,
		  (unsigned long long)r->rev);
	if (a->cfg.srd.etcd[0] && too_large(r, r->p, r->n, r->rev, &size)) {
		/* the leader could never write it: refused as a bad file is */
		agent_log("smo: %s: the set would be %zu bytes in etcd, over smo.relay_max_bytes (%u)",
			  a->cfg.smo.policies, size, a->cfg.smo.relay_max_bytes);
		smo_role_stop(r);
		return NULL;
	}
	if (a->cfg.srd.etcd[0] && election_start(r)) {
		smo_role_stop(r);
		return NULL;
	}
	return r;
}

void smo_role_stop(struct smo_role *r)
{
	if (!r)
		return;
	/* the connections are the srd role's: only the list goes */
	while (r->peers) {
		struct smo_peer *sp = r->peers;

		r->peers = sp->next;
		free(sp);
	}
	election_stop(r);
	smo_qos_free(r->qos);
	smo_qos_free(r->nodes);
	free(r->p);
	free(r);
}

void smo_role_qos(struct smo_role *r, const struct msg *m,
		  const unsigned char *payload, size_t len)
{
	smo_qos_report(r->qos, m, payload, len, agent_now_ms());
}

struct json_object *smo_role_show_qos(struct smo_role *r)
{
	return smo_qos_show(r->qos, agent_now_ms());
}

void smo_role_node(struct smo_role *r, const struct msg *m,
		   const unsigned char *payload, size_t len)
{
	smo_qos_report(r->nodes, m, payload, len, agent_now_ms());
}

struct json_object *smo_role_show_nodes(struct smo_role *r)
{
	return smo_qos_show(r->nodes, agent_now_ms());
}

struct json_object *smo_role_show(struct smo_role *r)
{
	struct json_object *o = json_object_new_object(), *a;

	json_object_object_add(o, "rev", json_object_new_uint64(r->rev));
	a = json_object_new_array();
	for (size_t i = 0; i < r->n; i++)
		json_object_array_add(a, policy_json(&r->p[i]));
	json_object_object_add(o, "policies", a);
	a = json_object_new_array();
	for (struct smo_peer *sp = r->peers; sp; sp = sp->next) {
		struct json_object *x = json_object_new_object();

		json_object_object_add(x, "node", json_object_new_string(conn_peer(sp->c)->node));
		json_object_object_add(x, "pushes", json_object_new_uint64(sp->pushes));
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "peers", a);
	json_object_object_add(o, "pushes", json_object_new_uint64(r->pushes));
	json_object_object_add(o, "applied", json_object_new_uint64(r->applied));
	json_object_object_add(o, "withdrawn", json_object_new_uint64(r->withdrawn));
	json_object_object_add(o, "election", election_show(r));
	if (r->el && r->el->relay)
		json_object_object_add(o, "relay", relay_show(r));
	return o;
}
