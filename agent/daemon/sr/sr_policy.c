// SPDX-License-Identifier: GPL-2.0
/*
 * sr_policy.h: an SR holds the tunnels and rules the SMO pushes.
 *
 * Ownership: this agent touches only what its state file records as
 * installed by it: tunnel ids and rule keys. A record is written (the
 * state file, atomically) before the kernel object is made and dropped
 * only after the object is gone, so a crash between the two leaves a
 * record of an object that may not exist, never an object without a
 * record. A tunnel or rule in the kernel that is not on record is the
 * operator's: left alone, even where a policy wants the same id or key
 * (then the policy's object is not installed, and a conflict counted).
 *
 * Reconciliation, after every push, at start (after a restart) and every
 * RECONCILE_MS (which also finds a reloaded module empty): the kernel's
 * tunnels and rules are dumped, then
 *  1. a rule on record that no policy wants (or wants into another
 *     tunnel) is deleted;
 *  2. a tunnel on record that no policy wants is deleted;
 *  3. a wanted tunnel that is missing is added; one on record that
 *     differs (source, paths, weights, backup) is changed in place
 *     (DMSC_CMD_TUNNEL_SET, so its flows stay); one that matches is left
 *     alone;
 *  4. a wanted rule that is missing is added; one on record that steers
 *     into another tunnel is deleted and added again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "nl_policy.h"
#include "sr_policy.h"

/* The etcd clusters an SR remembers having left (sr_policy_push). */
#define SR_EPOCHS_RETIRED	4

struct sr_policy {
	bool kernel;
	void (*save)(void *);
	void *arg;
	uint64_t rev;
	uint64_t term;		/* the highest applied (msg_policy.h); 0: none yet */
	uint64_t epoch;		/* the etcd cluster of that term; 0: unknown */
	/* epochs left behind, the latest last: never taken again */
	uint64_t retired[SR_EPOCHS_RETIRED];
	size_t nretired;
	struct policy *want;
	size_t nwant;
	/* on record as made by this agent */
	uint32_t *tun;
	size_t ntun;
	struct pol_rule *rul;
	size_t nrul;
	uint64_t pushes, fulls, gaps, stale, stale_terms, epochs, stale_epochs, reconciles,
		 added, changed,
		 deleted, conflicts, errors;
	char last_error[400];
};

static bool epoch_retired(const struct sr_policy *s, uint64_t epoch)
{
	for (size_t i = 0; i < s->nretired; i++)
		if (s->retired[i] == epoch)
			return true;
	return false;
}

static void epoch_retire(struct sr_policy *s, uint64_t epoch)
{
	if (s->nretired == SR_EPOCHS_RETIRED) {
		memmove(s->retired, s->retired + 1,
			(SR_EPOCHS_RETIRED - 1) * sizeof(*s->retired));
		s->nretired--;
	}
	s->retired[s->nretired++] = epoch;
}

struct sr_policy *sr_policy_new(bool kernel, void (*save)(void *), void *arg)
{
	struct sr_policy *s = calloc(1, sizeof(*s));

	if (s) {
		s->kernel = kernel;
		s->save = save;
		s->arg = arg;
	}
	return s;
}

void sr_policy_free(struct sr_policy *s)
{
	if (!s)
		return;
	free(s->want);
	free(s->tun);
	free(s->rul);
	free(s);
}

/* --- records ------------------------------------------------------------ */

static ssize_t tun_find(const struct sr_policy *s, uint32_t id)
{
	for (size_t i = 0; i < s->ntun; i++)
		if (s->tun[i] == id)
			return (ssize_t)i;
	return -1;
}

static ssize_t rul_find(const struct sr_policy *s, const struct pol_rule *r)
{
	for (size_t i = 0; i < s->nrul; i++)
		if (pol_rule_key_eq(&s->rul[i], r))
			return (ssize_t)i;
	return -1;
}

static int tun_record(struct sr_policy *s, uint32_t id)
{
	void *p;

	if (tun_find(s, id) >= 0)
		return 0;
	p = realloc(s->tun, (s->ntun + 1) * sizeof(*s->tun));
	if (!p)
		return -1;
	s->tun = p;
	s->tun[s->ntun++] = id;
	return 0;
}

static void tun_forget(struct sr_policy *s, uint32_t id)
{
	ssize_t i = tun_find(s, id);

	if (i >= 0)
		s->tun[i] = s->tun[--s->ntun];
}

static int rul_record(struct sr_policy *s, const struct pol_rule *r)
{
	ssize_t i = rul_find(s, r);
	void *p;

	if (i >= 0) {
		s->rul[i] = *r;
		return 0;
	}
	p = realloc(s->rul, (s->nrul + 1) * sizeof(*s->rul));
	if (!p)
		return -1;
	s->rul = p;
	s->rul[s->nrul++] = *r;
	return 0;
}

static void rul_forget(struct sr_policy *s, const struct pol_rule *r)
{
	ssize_t i = rul_find(s, r);

	if (i >= 0)
		s->rul[i] = s->rul[--s->nrul];
}

/* --- what is wanted --------------------------------------------------------- */

static const struct policy *want_tunnel(const struct sr_policy *s, uint32_t id)
{
	for (size_t i = 0; i < s->nwant; i++)
		if (s->want[i].tunnel == id)
			return &s->want[i];
	return NULL;
}

static const struct pol_rule *want_rule(const struct sr_policy *s,
					const struct pol_rule *r)
{
	for (size_t i = 0; i < s->nwant; i++)
		for (uint32_t j = 0; j < s->want[i].nrules; j++)
			if (pol_rule_key_eq(&s->want[i].rules[j], r))
				return &s->want[i].rules[j];
	return NULL;
}

/* --- the kernel ------------------------------------------------------------- */

static void note_err(struct sr_policy *s, const struct dmsc_nl *nl,
		     const char *what, uint32_t id, int err)
{
	s->errors++;
	snprintf(s->last_error, sizeof(s->last_error), "%s %u: %s%s%s", what, id,
		 strerror(-err), nl->errmsg[0] ? ": " : "", nl->errmsg);
	agent_log("sr: policy: %s", s->last_error);
}

static const struct policy *k_tunnel(const struct policy *k, size_t nk,
				     uint32_t id)
{
	for (size_t i = 0; i < nk; i++)
		if (k[i].tunnel == id)
			return &k[i];
	return NULL;
}

static const struct pol_rule *k_rule(const struct pol_rule *k, size_t nk,
				     const struct pol_rule *r)
{
	for (size_t i = 0; i < nk; i++)
		if (pol_rule_key_eq(&k[i], r))
			return &k[i];
	return NULL;
}

static int reconcile_kernel(struct sr_policy *s)
{
	struct policy *kt = NULL;
	struct pol_rule *kr = NULL;
	size_t nkt = 0, nkr = 0;
	struct dmsc_nl nl;
	int err, dirty = 0;

	/*
	 * A socket of its own for each round: the events socket must not see
	 * replies, and a module reloaded since has another family id.
	 */
	err = dmsc_nl_open(&nl);
	if (err) {
		snprintf(s->last_error, sizeof(s->last_error), "netlink: %s",
			 strerror(-err));
		s->errors++;
		return -1;
	}
	err = dmsc_nl_tunnel_dump(&nl, &kt, &nkt);
	if (!err)
		err = dmsc_nl_rule_dump(&nl, &kr, &nkr);
	if (err) {
		note_err(s, &nl, "dump", 0, err);
		goto out;
	}
	/* 1. rules on record, no longer wanted as they are */
	for (size_t i = 0; i < s->nrul;) {
		struct pol_rule r = s->rul[i];
		const struct pol_rule *w = want_rule(s, &r), *k = k_rule(kr, nkr, &r);

		if (w && w->tunnel == r.tunnel) {
			i++;
			continue;
		}
		if (k && k->tunnel == r.tunnel) {
			err = dmsc_nl_rule_del(&nl, &r);
			if (err && err != -ENOENT) {
				note_err(s, &nl, "rule del, tunnel", r.tunnel, err);
				i++;
				continue;
			}
			s->deleted++;
		}
		rul_forget(s, &r);	/* i now holds another one */
		dirty = 1;
	}
	/* 2. tunnels on record, no longer wanted */
	for (size_t i = 0; i < s->ntun;) {
		uint32_t id = s->tun[i];

		if (want_tunnel(s, id)) {
			i++;
			continue;
		}
		if (k_tunnel(kt, nkt, id)) {
			err = dmsc_nl_tunnel_del(&nl, id);
			if (err && err != -ENOENT) {
				note_err(s, &nl, "tunnel del", id, err);
				i++;
				continue;
			}
			s->deleted++;
		}
		tun_forget(s, id);
		dirty = 1;
	}
	/* 3. tunnels wanted */
	for (size_t i = 0; i < s->nwant; i++) {
		const struct policy *w = &s->want[i];
		const struct policy *k = k_tunnel(kt, nkt, w->tunnel);
		int mine = tun_find(s, w->tunnel) >= 0;

		if (k && !mine) {
			s->conflicts++;
			snprintf(s->last_error, sizeof(s->last_error),
				 "tunnel %u of policy %s: the kernel has one this agent did not make; left alone",
				 w->tunnel, w->name);
			continue;
		}
		if (k && policy_tunnel_eq(k, w))
			continue;
		if (!k) {
			/* on record before it exists */
			if (tun_record(s, w->tunnel))
				continue;
			s->save(s->arg);
		}
		err = dmsc_nl_tunnel_put(&nl, k ? DMSC_CMD_TUNNEL_SET :
					 DMSC_CMD_TUNNEL_NEW, w);
		if (err) {
			note_err(s, &nl, k ? "tunnel change" : "tunnel add",
				 w->tunnel, err);
			if (!k) {
				tun_forget(s, w->tunnel);
				dirty = 1;
			}
			continue;
		}
		if (k)
			s->changed++;
		else
			s->added++;
		agent_log("sr: policy %s: tunnel %u %s", w->name, w->tunnel,
			  k ? "changed" : "added");
	}
	/* 4. rules wanted, into tunnels this agent holds */
	for (size_t i = 0; i < s->nwant; i++) {
		const struct policy *w = &s->want[i];

		if (tun_find(s, w->tunnel) < 0)
			continue;	/* a conflict, or its add failed */
		for (uint32_t j = 0; j < w->nrules; j++) {
			const struct pol_rule *r = &w->rules[j];
			const struct pol_rule *k = k_rule(kr, nkr, r);
			int mine = rul_find(s, r) >= 0;

			if (k && !mine) {
				s->conflicts++;
				snprintf(s->last_error, sizeof(s->last_error),
					 "a rule of policy %s: the kernel has one of the same key this agent did not make; left alone",
					 w->name);
				continue;
			}
			if (k && k->tunnel == r->tunnel)
				continue;
			if (k) {
				err = dmsc_nl_rule_del(&nl, k);
				if (err && err != -ENOENT) {
					note_err(s, &nl, "rule del, tunnel", k->tunnel, err);
					continue;
				}
			}
			if (rul_record(s, r))
				continue;
			s->save(s->arg);
			err = dmsc_nl_rule_add(&nl, r);
			if (err) {
				note_err(s, &nl, "rule add, tunnel", r->tunnel, err);
				rul_forget(s, r);
				dirty = 1;
				continue;
			}
			s->added++;
		}
	}
	err = 0;
out:
	if (dirty)
		s->save(s->arg);
	free(kt);
	free(kr);
	dmsc_nl_close(&nl);
	return err ? -1 : 0;
}

/* Without a kernel the records follow what is wanted. */
static void reconcile_records(struct sr_policy *s)
{
	s->ntun = 0;
	s->nrul = 0;
	for (size_t i = 0; i < s->nwant; i++) {
		tun_record(s, s->want[i].tunnel);
		for (uint32_t j = 0; j < s->want[i].nrules; j++)
			rul_record(s, &s->want[i].rules[j]);
	}
	s->save(s->arg);
}

int sr_policy_reconcile(struct sr_policy *s)
{
	s->reconciles++;
	if (!s->kernel) {
		reconcile_records(s);
		return 0;
	}
	return reconcile_kernel(s);
}

void sr_policy_push(struct sr_policy *s, const struct msg_policy *m)
{
	struct policy *p;

	/*
	 * A term of another etcd cluster (etcd restored from a snapshot: a
	 * new cluster_id, revisions gone back) starts the order again: the
	 * terms before are of a cluster no SMO writes to any more. Unknown
	 * (0) on either side is not another: ordered by term alone.
	 */
	if (m->term && m->epoch && s->epoch && m->epoch != s->epoch) {
		/*
		 * Epochs have no order, so an epoch change only goes
		 * forward: a cluster this SR left (a controller still on the
		 * etcd before a restore) cannot take it back, nor undo
		 * the newer set with its older one.
		 */
		if (epoch_retired(s, m->epoch)) {
			s->stale_epochs++;
			agent_log("sr: policy push of term %llu refused: etcd cluster %llx is one this SR left",
				  (unsigned long long)m->term, (unsigned long long)m->epoch);
			return;
		}
		epoch_retire(s, s->epoch);
		s->epochs++;
		agent_log("sr: policy push of term %llu from etcd cluster %llx, this SR applied term %llu of %llx: a new epoch, taken",
			  (unsigned long long)m->term, (unsigned long long)m->epoch,
			  (unsigned long long)s->term, (unsigned long long)s->epoch);
		s->term = 0;
		s->epoch = m->epoch;
	}
	/*
	 * A set an SMO leader wrote to etcd before the one this SR applied
	 * (a deposed leader, a controller that has not read etcd yet): its
	 * term is lower, and so is its age, whatever "full" and "rev" say.
	 */
	if (m->term && m->term < s->term) {
		s->stale_terms++;
		agent_log("sr: policy push of term %llu refused: this SR applied term %llu",
			  (unsigned long long)m->term, (unsigned long long)s->term);
		return;
	}
	/* a later term is a later write by a leader, newer whatever its "rev" */
	if (!m->full && m->term <= s->term && m->rev <= s->rev) {
		s->stale++;	/* had it: applied once only */
		return;
	}
	if (!m->full && m->rev != s->rev + 1) {
		/* the set is whole: taken all the same, and counted */
		s->gaps++;
		agent_log("sr: policy revision %llu, this SR was at %llu: a gap",
			  (unsigned long long)m->rev, (unsigned long long)s->rev);
	}
	p = malloc((m->n ? m->n : 1) * sizeof(*p));
	if (!p)
		return;
	memcpy(p, m->p, m->n * sizeof(*p));
	free(s->want);
	s->want = p;
	s->nwant = m->n;
	s->rev = m->rev;
	if (m->term > s->term)
		s->term = m->term;
	if (m->term && m->epoch)
		s->epoch = m->epoch;
	s->pushes++;
	s->fulls += m->full;
	agent_log("sr: %zu policies at revision %llu%s, term %llu", m->n,
		  (unsigned long long)m->rev, m->full ? " (full)" : "",
		  (unsigned long long)s->term);
	s->save(s->arg);
	sr_policy_reconcile(s);
}

/* --- state and show ----------------------------------------------------------- */

const struct policy *sr_policy_desired(const struct sr_policy *s, size_t *n)
{
	*n = s->nwant;
	return s->want;
}

struct json_object *sr_policy_state(const struct sr_policy *s)
{
	struct json_object *o = json_object_new_object(), *a, *in;

	json_object_object_add(o, "rev", json_object_new_uint64(s->rev));
	/* kept across restarts, or a stale leader's set would be taken after one */
	if (s->term)
		json_object_object_add(o, "term", json_object_new_uint64(s->term));
	if (s->term && s->epoch)
		json_object_object_add(o, "epoch", json_object_new_uint64(s->epoch));
	if (s->nretired) {
		a = json_object_new_array();
		for (size_t i = 0; i < s->nretired; i++)
			json_object_array_add(a, json_object_new_uint64(s->retired[i]));
		json_object_object_add(o, "retired_epochs", a);
	}
	a = json_object_new_array();
	for (size_t i = 0; i < s->nwant; i++)
		json_object_array_add(a, policy_json(&s->want[i]));
	json_object_object_add(o, "desired", a);
	in = json_object_new_object();
	a = json_object_new_array();
	for (size_t i = 0; i < s->ntun; i++)
		json_object_array_add(a, json_object_new_uint64(s->tun[i]));
	json_object_object_add(in, "tunnels", a);
	a = json_object_new_array();
	for (size_t i = 0; i < s->nrul; i++)
		json_object_array_add(a, pol_rule_json(&s->rul[i]));
	json_object_object_add(in, "rules", a);
	json_object_object_add(o, "installed", in);
	return o;
}

int sr_policy_load(struct sr_policy *s, struct json_object *o)
{
	struct json_object *v, *in, *a;
	char err[256];
	uint64_t rev, term = 0, epoch = 0;

	if (msg_get_u64(o, "policies", "rev", UINT64_MAX, &rev, err, sizeof(err)) ||
	    (json_object_object_get_ex(o, "term", NULL) &&
	     msg_get_u64(o, "policies", "term", UINT64_MAX, &term, err, sizeof(err))) ||
	    (json_object_object_get_ex(o, "epoch", NULL) &&
	     msg_get_u64(o, "policies", "epoch", UINT64_MAX, &epoch, err, sizeof(err))) ||
	    !json_object_object_get_ex(o, "desired", &v) ||
	    policy_array_parse(v, "policies.desired", &s->want, &s->nwant, err,
			       sizeof(err)) ||
	    msg_get_object(o, "policies", "installed", &in, err, sizeof(err)) ||
	    msg_get_array(in, "policies.installed", "tunnels", 1u << 20, &a, err,
			  sizeof(err)))
		goto bad;
	if (json_object_object_get_ex(o, "retired_epochs", NULL)) {
		struct json_object *ra;

		if (msg_get_array(o, "policies", "retired_epochs", SR_EPOCHS_RETIRED, &ra,
				  err, sizeof(err)))
			goto bad;
		for (size_t i = 0; i < json_object_array_length(ra); i++) {
			struct json_object *x = json_object_array_get_idx(ra, i);

			if (!json_object_is_type(x, json_type_int) ||
			    !json_object_get_uint64(x)) {
				snprintf(err, sizeof(err),
					 "policies.retired_epochs[%zu]: not an etcd cluster id", i);
				goto bad;
			}
			s->retired[s->nretired++] = json_object_get_uint64(x);
		}
	}
	s->rev = rev;
	s->term = term;
	s->epoch = term ? epoch : 0;
	for (size_t i = 0; i < json_object_array_length(a); i++)
		tun_record(s, (uint32_t)json_object_get_int64(json_object_array_get_idx(a, i)));
	if (msg_get_array(in, "policies.installed", "rules", 1u << 20, &a, err,
			  sizeof(err)))
		goto bad;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		struct pol_rule r;

		if (pol_rule_from_json(json_object_array_get_idx(a, i),
				       "policies.installed.rules", &r, err,
				       sizeof(err)))
			goto bad;
		rul_record(s, &r);
	}
	agent_log("sr: state: %zu policies at revision %llu (term %llu), %zu tunnels and %zu rules installed",
		  s->nwant, (unsigned long long)s->rev, (unsigned long long)s->term,
		  s->ntun, s->nrul);
	return 0;
bad:
	agent_log("sr: state: %s", err);
	return -1;
}

struct json_object *sr_policy_show(const struct sr_policy *s)
{
	struct json_object *o = sr_policy_state(s);

	json_object_object_add(o, "kernel", json_object_new_boolean(s->kernel));
	json_object_object_add(o, "pushes", json_object_new_uint64(s->pushes));
	json_object_object_add(o, "full", json_object_new_uint64(s->fulls));
	json_object_object_add(o, "gaps", json_object_new_uint64(s->gaps));
	json_object_object_add(o, "stale", json_object_new_uint64(s->stale));
	json_object_object_add(o, "term", json_object_new_uint64(s->term));
	json_object_object_add(o, "stale_term", json_object_new_uint64(s->stale_terms));
	json_object_object_add(o, "epoch_changes", json_object_new_uint64(s->epochs));
	json_object_object_add(o, "stale_epoch", json_object_new_uint64(s->stale_epochs));
	json_object_object_add(o, "reconciles", json_object_new_uint64(s->reconciles));
	json_object_object_add(o, "added", json_object_new_uint64(s->added));
	json_object_object_add(o, "changed", json_object_new_uint64(s->changed));
	json_object_object_add(o, "deleted", json_object_new_uint64(s->deleted));
	json_object_object_add(o, "conflicts", json_object_new_uint64(s->conflicts));
	json_object_object_add(o, "errors", json_object_new_uint64(s->errors));
	json_object_object_add(o, "last_error", json_object_new_string(s->last_error));
	return o;
}
