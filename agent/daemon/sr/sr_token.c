// SPDX-License-Identifier: GPL-2.0
/*
 * The sr role and service access tokens (sr_token.h).
 *
 * A token request from the control socket goes to the AAM over the SR's
 * connection to its controller, as type 3 "request"; the control
 * socket's answer waits for the AAM's "token" or "denied" whose "re" is
 * the request's seq, for SR_TOKEN_TIMEOUT_MS at most, and fails at once
 * when the connection ends. Only a peer whose certificate names the aam
 * role may answer or push a revoked list.
 *
 * The access check is offline (tokens.h): signature, claims, expiry and
 * the AAM's revoked list; then the token's node must be this node (the
 * AAM puts the requesting SR's node there, so a token taken from one node
 * is worth nothing at another), and the service prefix must lie inside
 * the token's scope (token_scope_allows()). A refusal is counted by
 * reason: signature, expired, not-yet-valid, revoked, kid, malformed,
 * node, scope, no-verifier.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "log.h"
#include "msg_auth.h"
#include "sr_token.h"
#include "tokens.h"

enum refusal {
	REF_SIGNATURE, REF_EXPIRED, REF_NOT_YET, REF_REVOKED, REF_KID,
	REF_MALFORMED, REF_NODE, REF_SCOPE, REF_NO_VERIFIER, REF_N
};
static const char *const ref_names[] = {
	"signature", "expired", "not-yet-valid", "revoked", "kid", "malformed",
	"node", "scope", "no-verifier",
};

struct pending {
	struct sr_token *t;
	uint64_t seq;
	struct ctl_req *q;		/* NULL: free */
	struct event *timer;
};

struct sr_token {
	struct agent *a;
	struct pending p[SR_TOKEN_PENDING_MAX];
	uint64_t requests, granted, denied, timeouts, failed, late;
	uint64_t allowed, refused[REF_N], revoked_pushes;
};

static void finish(struct pending *p, struct json_object *data,
		   const char *error)
{
	struct ctl_req *q = p->q;

	p->q = NULL;
	if (p->timer) {
		event_free(p->timer);
		p->timer = NULL;
	}
	ctl_req_done(q, data, error);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct pending *p = arg;
	char e[160];

	(void)fd;
	(void)what;
	p->t->timeouts++;
	snprintf(e, sizeof(e), "token: no answer from the AAM within %d ms (does the controller run the aam role with an aam section?)",
		 SR_TOKEN_TIMEOUT_MS);
	finish(p, NULL, e);
}

struct sr_token *sr_token_new(struct agent *a)
{
	struct sr_token *t = calloc(1, sizeof(*t));

	if (t)
		t->a = a;
	return t;
}

static void fail_all(struct sr_token *t, const char *why)
{
	for (size_t i = 0; i < SR_TOKEN_PENDING_MAX; i++)
		if (t->p[i].q) {
			t->failed++;
			finish(&t->p[i], NULL, why);
		}
}

void sr_token_free(struct sr_token *t)
{
	if (!t)
		return;
	fail_all(t, "token: the agent is stopping");
	free(t);
}

void sr_token_conn_down(struct sr_token *t)
{
	fail_all(t, "token: the connection to the controller ended before the AAM answered");
}

static bool claim_ok(const char *s)
{
	for (; *s; s++)
		if (*s <= ' ' || *s > '~')
			return false;
	return true;
}

int sr_token_request(struct sr_token *t, struct conn *c,
		     struct json_object *req, struct ctl_req *q, char *err,
		     size_t errlen)
{
	static const char *const keys[] = { "sub", "scope", "lifetime_s", NULL };
	struct msg_auth m = { .op = AUTH_REQUEST };
	struct timeval tv = { SR_TOKEN_TIMEOUT_MS / 1000,
			      SR_TOKEN_TIMEOUT_MS % 1000 * 1000 };
	struct pending *p = NULL;

	if (!json_object_is_type(req, json_type_object)) {
		snprintf(err, errlen, "expected an object");
		return -1;
	}
	m.lifetime_s = 300;	/* the AAM caps it at its aam.lifetime_s */
	if (msg_keys_only(req, "token", keys, NULL, err, errlen) ||
	    msg_get_string(req, "token", "sub", m.sub, sizeof(m.sub), err, errlen) ||
	    msg_get_string(req, "token", "scope", m.scope, sizeof(m.scope), err,
			   errlen) ||
	    (json_object_object_get_ex(req, "lifetime_s", NULL) &&
	     msg_get_u64(req, "token", "lifetime_s", TOKEN_MAX_LIFETIME,
			 &m.lifetime_s, err, errlen)))
		return -1;
	if (!m.lifetime_s) {
		snprintf(err, errlen, "token.lifetime_s: must be 1..%d", TOKEN_MAX_LIFETIME);
		return -1;
	}
	/* what a claim can hold (token.h), said here rather than by the codec */
	if (!claim_ok(m.sub) || !claim_ok(m.scope)) {
		snprintf(err, errlen, "token.%s: not printable ASCII without spaces",
			 claim_ok(m.sub) ? "scope" : "sub");
		return -1;
	}
	if (!c) {
		snprintf(err, errlen, "not connected to a controller");
		return -1;
	}
	for (size_t i = 0; i < SR_TOKEN_PENDING_MAX && !p; i++)
		if (!t->p[i].q)
			p = &t->p[i];
	if (!p) {
		snprintf(err, errlen, "%d requests already wait for the AAM",
			 SR_TOKEN_PENDING_MAX);
		return -1;
	}
	if (agent_msg_send(t->a, c, &msg_auth_type, &m)) {
		snprintf(err, errlen, "request not sent (the connection failed)");
		return -1;
	}
	p->timer = evtimer_new(t->a->base, on_timeout, p);
	if (!p->timer || evtimer_add(p->timer, &tv)) {
		if (p->timer)
			event_free(p->timer);
		p->timer = NULL;
		snprintf(err, errlen, "no timer");
		return -1;
	}
	p->t = t;
	p->seq = t->a->seq;	/* agent_msg_send's */
	p->q = q;
	t->requests++;
	return 0;
}

static struct pending *find(struct sr_token *t, uint64_t seq)
{
	for (size_t i = 0; i < SR_TOKEN_PENDING_MAX; i++)
		if (t->p[i].q && t->p[i].seq == seq)
			return &t->p[i];
	return NULL;
}

void sr_token_frame(struct sr_token *t, struct conn *c, const struct msg *m)
{
	const struct msg_auth *b = m->body;
	struct json_object *d;
	struct pending *p;
	char why[AUTH_REASON_MAX + 64];

	if (!(conn_peer(c)->roles & ROLE_AAM) || b->op == AUTH_REQUEST) {
		snprintf(why, sizeof(why), "type 3 op %s from a peer %s",
			 msg_auth_op_name(b->op),
			 b->op == AUTH_REQUEST ? "(requests go to the AAM)" :
			 "whose certificate has no aam role");
		reject_note(&t->a->rej, b->op == AUTH_REQUEST ? "type" : "role",
			    conn_peer(c)->node, why);
		return;
	}
	if (b->op == AUTH_REVOKED) {
		t->revoked_pushes++;
		if (agent_tokens_set_revoked(t->a, b->revoked, b->nrevoked) &&
		    t->a->tokens)
			agent_log("sr: the AAM's revoked list: out of memory");
		return;
	}
	p = find(t, b->re);
	if (!p) {
		t->late++;	/* after its timeout, or never asked */
		return;
	}
	if (b->op == AUTH_DENIED) {
		t->denied++;
		snprintf(why, sizeof(why), "token: denied by the AAM: %s", b->reason);
		finish(p, NULL, why);
		return;
	}
	t->granted++;
	d = json_object_new_object();
	json_object_object_add(d, "token", json_object_new_string(b->token));
	finish(p, d, NULL);
}

/*
 * By how the reason starts, which token_verify() and agent_token_check()
 * write: a token's own text (an alg, a kid) comes later in the reason, so
 * it cannot choose the counter.
 */
static enum refusal classify(const char *err)
{
	if (!strncmp(err, "no tokens section", 17))
		return REF_NO_VERIFIER;
	if (!strncmp(err, "expired", 7))
		return REF_EXPIRED;
	if (!strncmp(err, "not yet valid", 13))
		return REF_NOT_YET;
	if (!strncmp(err, "revoked", 7))
		return REF_REVOKED;
	if (!strcmp(err, "bad signature") || !strncmp(err, "signature:", 10))
		return REF_SIGNATURE;
	if (!strncmp(err, "header: kid:", 12))
		return REF_KID;
	return REF_MALFORMED;
}

struct json_object *sr_token_access(struct sr_token *t, struct json_object *req,
				    char *err, size_t errlen)
{
	static const char *const keys[] = { "token", "prefix", NULL };
	struct json_object *v, *d;
	struct token_claims c;
	char why[320], prefix[TOKEN_SUB_MAX];
	const char *tok;
	enum refusal ref = REF_N;

	if (!json_object_is_type(req, json_type_object) ||
	    msg_keys_only(req, "access", keys, NULL, err, errlen) ||
	    msg_get_string(req, "access", "prefix", prefix, sizeof(prefix), err,
			   errlen))
		return json_object_is_type(req, json_type_object) ? NULL :
		       (snprintf(err, errlen, "expected an object"), NULL);
	/* "*" would allow what does not parse too */
	if (!token_scope_allows("::/0", prefix)) {
		snprintf(err, errlen, "access.prefix: \"%s\" is not an IPv6 ADDR/LEN", prefix);
		return NULL;
	}
	if (!json_object_object_get_ex(req, "token", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		snprintf(err, errlen, "access.token: required, a string");
		return NULL;
	}
	tok = json_object_get_string(v);
	memset(&c, 0, sizeof(c));
	if (agent_token_check(t->a, tok, (size_t)json_object_get_string_len(v),
			      &c, why, sizeof(why))) {
		ref = classify(why);
	} else if (strcmp(c.node, t->a->cfg.node)) {
		ref = REF_NODE;
		snprintf(why, sizeof(why), "the token is for node %s, this is %s",
			 c.node, t->a->cfg.node);
	} else if (!token_scope_allows(c.scope, prefix)) {
		ref = REF_SCOPE;
		snprintf(why, sizeof(why), "%s is not inside the token's scope %s",
			 prefix, c.scope);
	}
	d = json_object_new_object();
	json_object_object_add(d, "allowed", json_object_new_boolean(ref == REF_N));
	json_object_object_add(d, "prefix", json_object_new_string(prefix));
	if (ref != REF_N) {
		t->refused[ref]++;
		json_object_object_add(d, "reason", json_object_new_string(ref_names[ref]));
		json_object_object_add(d, "error", json_object_new_string(why));
		return d;
	}
	t->allowed++;
	json_object_object_add(d, "sub", json_object_new_string(c.sub));
	json_object_object_add(d, "scope", json_object_new_string(c.scope));
	json_object_object_add(d, "jti", json_object_new_string(c.jti));
	json_object_object_add(d, "exp", json_object_new_int64(c.exp));
	return d;
}

struct json_object *sr_token_show(struct sr_token *t)
{
	struct json_object *o = json_object_new_object(), *r, *x;
	uint64_t total = 0;

	x = json_object_new_object();
	json_object_object_add(x, "requests", json_object_new_uint64(t->requests));
	json_object_object_add(x, "granted", json_object_new_uint64(t->granted));
	json_object_object_add(x, "denied", json_object_new_uint64(t->denied));
	json_object_object_add(x, "timeouts", json_object_new_uint64(t->timeouts));
	json_object_object_add(x, "failed", json_object_new_uint64(t->failed));
	json_object_object_add(x, "late", json_object_new_uint64(t->late));
	json_object_object_add(o, "token_requests", x);
	r = json_object_new_object();
	for (int i = 0; i < REF_N; i++) {
		json_object_object_add(r, ref_names[i], json_object_new_uint64(t->refused[i]));
		total += t->refused[i];
	}
	x = json_object_new_object();
	json_object_object_add(x, "allowed", json_object_new_uint64(t->allowed));
	json_object_object_add(x, "refused", json_object_new_uint64(total));
	json_object_object_add(x, "refused_by_reason", r);
	json_object_object_add(o, "access", x);
	json_object_object_add(o, "revoked_pushes", json_object_new_uint64(t->revoked_pushes));
	return o;
}
