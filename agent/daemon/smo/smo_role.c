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
 * No leader election: one SMO per set of SRs (Documentation/agent.md).
 * Changes made at run time last until the agent restarts; then the
 * policy file is the set again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "json_strict.h"
#include "log.h"
#include "msg_policy.h"
#include "smo_qos.h"

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
};

/* The policies of @node, in a push at the current revision. */
static void push_one(struct smo_role *r, struct smo_peer *sp, bool full)
{
	const char *node = conn_peer(sp->c)->node;
	struct msg_policy m = { .rev = r->rev, .full = full };
	struct policy *mine = calloc(r->n ? r->n : 1, sizeof(*mine));

	if (!mine)
		return;
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->p[i].node, node))
			mine[m.n++] = r->p[i];
	m.p = mine;
	if (!agent_msg_send(r->a, sp->c, &msg_policy_type, &m)) {
		sp->pushes++;
		r->pushes++;
	}
	free(mine);
}

static void push_all(struct smo_role *r)
{
	for (struct smo_peer *sp = r->peers; sp; sp = sp->next)
		push_one(r, sp, false);
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
	size_t nin, n;

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
	free(r->p);
	r->p = set;
	r->n = n;
	r->rev++;
	r->applied += nin;
	agent_log("smo: %zu policies applied, %zu in all, revision %llu", nin, n,
		  (unsigned long long)r->rev);
	push_all(r);
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
	push_all(r);
	return 0;
}

struct smo_role *smo_role_start(struct agent *a)
{
	struct smo_role *r = calloc(1, sizeof(*r));
	struct json_object *doc;
	char err[320];

	if (!r)
		return NULL;
	r->a = a;
	r->qos = smo_qos_new();
	if (!r->qos) {
		free(r);
		return NULL;
	}
	if (a->cfg.smo.policies[0]) {
		doc = json_strict_load(a->cfg.smo.policies, err, sizeof(err));
		if (!doc || smo_role_apply(r, doc, err, sizeof(err))) {
			agent_log("smo: %s: %s", a->cfg.smo.policies, err);
			json_object_put(doc);
			smo_qos_free(r->qos);
			free(r->p);
			free(r);
			return NULL;
		}
		json_object_put(doc);
	}
	agent_log("smo: %zu policies at revision %llu", r->n,
		  (unsigned long long)r->rev);
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
	smo_qos_free(r->qos);
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
	return o;
}
