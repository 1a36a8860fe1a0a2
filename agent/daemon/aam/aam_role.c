// SPDX-License-Identifier: GPL-2.0
/*
 * The aam role's token issuer (signalling type 3, msg_auth.h): an SR or
 * a gateway asks, on behalf of an MI or a client, for a token of a
 * subject and a scope; the AAM checks the request against aam.grants and
 * answers with a token signed by aam.key (token.h) or a denial with its
 * reason. Deny by default: a request is granted only if a grant's "sub"
 * (an fnmatch(3) pattern, or a plain name) matches the subject and the
 * requested scope lies inside the grant's scope (token_scope_allows()).
 * The token's node is the requesting peer's, from its certificate: an SR
 * gets tokens that only its own node accepts (sr_token.c), whatever it
 * asks for. The lifetime is the one asked, at most aam.lifetime_s.
 *
 * Like the smo it rides the connections the SRs open to the srd role of
 * the same agent (config.c refuses aam without srd): the SRs already
 * dial their controller with failover, and every message is held to the
 * policy table by the sender's certificate.
 *
 * Revocation: `dmsc agent aam revoke JTI` adds the jti with its token's
 * exp (known if this AAM issued it since its start, else now plus the
 * longest lifetime, TOKEN_MAX_LIFETIME) to the revoked list, which is
 * pushed whole to every connected SR and gateway on each change and when
 * one connects, and kept in aam.revoked (a small JSON file written
 * atomically) so that a restarted AAM pushes it again. Entries go once
 * their exp has passed: the token is refused as expired then anyway.
 *
 * With an etcd store the list is shared by the AAMs of every controller
 * on the cluster (aam_shared.h): a revocation is kept and pushed here
 * first, then written to etcd by a worker thread; what the others wrote
 * comes back from its reads and joins the list (on_shared()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/pem.h>

#include "aam_shared.h"
#include "agent.h"
#include "conn.h"
#include "json_strict.h"
#include "log.h"
#include "msg_auth.h"
#include "tokens.h"

/* the jtis issued since the start, for their exp at a revocation */
#define AAM_ISSUED_MAX	16384

/*
 * A verifier takes a token until its exp plus its tokens.skew_s (at most
 * 300 s): a revoked jti stays on the list that long, or a push without it
 * would let the token pass again in that window.
 */
#define AAM_REVOKED_GRACE_S	300
/*
 * A request costs a signature, a log line and an answer queued to the
 * peer: per peer at most AAM_RATE a second (a burst of AAM_BURST), and
 * none while AAM_BACKLOG bytes wait unsent to it (a peer that asks and
 * never reads). Those over are dropped unanswered (the SR's own timeout
 * tells its client) and counted.
 */
#define AAM_RATE	50
#define AAM_BURST	100
#define AAM_BACKLOG	(256u << 10)
/* log lines of denials and drops, a second */
#define AAM_LOG_PER_S	10

enum deny_reason { DENY_NO_GRANT, DENY_SCOPE, DENY_NODE, DENY_SIGN, DENY_N };
static const char *const deny_names[] = { "no-grant", "scope", "node", "sign" };

struct aam_peer {
	struct conn *c;
	double credit;		/* requests it may make now (AAM_RATE/s) */
	int64_t credit_ms;	/* when credit was last topped up */
	struct aam_peer *next;
};

struct aam_role {
	struct agent *a;
	EVP_PKEY *key;
	struct aam_peer *peers;
	struct auth_revoked *revoked;	/* AUTH_REVOKED_MAX of room */
	size_t nrevoked;
	struct auth_revoked *issued;	/* a ring of AAM_ISSUED_MAX */
	size_t nissued, issued_next;
	uint64_t requests, granted, denied[DENY_N], revokes, pushes;
	uint64_t rate_limited, backlogged, peers_lost;
	struct aam_shared *shared;	/* with an etcd store: the AAMs' union */
	uint64_t shared_in;		/* jtis taken from etcd */
	int64_t log_second;
	unsigned int log_lines;
};

static int64_t now_s(void)
{
	return (int64_t)time(NULL);
}

/* --- the revoked list ------------------------------------------------------ */

static int jti_ok(const char *s);

static void prune(struct aam_role *r)
{
	int64_t now = now_s();
	size_t k = 0;

	for (size_t i = 0; i < r->nrevoked; i++)
		if (r->revoked[i].exp + AAM_REVOKED_GRACE_S >= now)
			r->revoked[k++] = r->revoked[i];
	r->nrevoked = k;
}

/* The revoked list as aam.revoked and show aam hold it: [{ jti, exp }]. */
static struct json_object *revoked_json(const struct aam_role *r)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; i < r->nrevoked; i++) {
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "jti", json_object_new_string(r->revoked[i].jti));
		json_object_object_add(e, "exp", json_object_new_int64(r->revoked[i].exp));
		json_object_array_add(arr, e);
	}
	return arr;
}

/*
 * The rename of a new aam.revoked is durable once its directory is: else
 * a crash right after an acknowledged revocation could bring back the old
 * list.
 */
static void dir_sync(const char *path)
{
	char dir[CONFIG_PATH_MAX];
	char *slash;
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return;
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fsync(fd))
		agent_log("aam: fsync of %s: %s", dir, strerror(errno));
	close(fd);
}

/* aam.revoked, atomically: a crash leaves the old file or the new one. */
static int revoked_save(struct aam_role *r, char *err, size_t errlen)
{
	const char *path = r->a->cfg.aam.revoked;
	struct json_object *o, *arr;
	char tmp[CONFIG_PATH_MAX + 8];
	const char *text;
	int fd, ok, saved;

	if (!*path)
		return 0;
	o = json_object_new_object();
	arr = revoked_json(r);
	json_object_object_add(o, "revoked", arr);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	errno = 0;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text) &&
	     !fsync(fd);
	saved = errno ? errno : EIO;	/* a short write sets none */
	if (fd >= 0)
		close(fd);
	if (ok && rename(tmp, path)) {
		saved = errno;
		ok = 0;
	}
	if (!ok) {
		unlink(tmp);
		snprintf(err, errlen, "aam.revoked: %s: %s", path, strerror(saved));
	} else {
		dir_sync(path);
	}
	json_object_put(o);
	return ok ? 0 : -1;
}

static int revoked_load(struct aam_role *r)
{
	static const char *const top[] = { "revoked", NULL };
	static const char *const keys[] = { "jti", "exp", NULL };
	const char *path = r->a->cfg.aam.revoked;
	struct json_object *o, *arr;
	char err[320];
	int ret = -1;

	if (!*path) {
		agent_log("aam: no aam.revoked: revocations last until the agent stops");
		return 0;
	}
	if (access(path, F_OK) && errno == ENOENT)
		return 0;
	o = json_strict_load(path, err, sizeof(err));
	if (!o || !json_object_is_type(o, json_type_object) ||
	    msg_keys_only(o, "aam.revoked", top, NULL, err, sizeof(err)) ||
	    msg_get_array(o, "aam.revoked", "revoked", AUTH_REVOKED_MAX, &arr, err,
			  sizeof(err)))
		goto out;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		struct auth_revoked *v = &r->revoked[r->nrevoked];
		uint64_t exp;

		if (!json_object_is_type(e, json_type_object) ||
		    msg_keys_only(e, "aam.revoked", keys, NULL, err, sizeof(err)) ||
		    msg_get_string(e, "aam.revoked", "jti", v->jti, sizeof(v->jti),
				   err, sizeof(err)) ||
		    msg_get_u64(e, "aam.revoked", "exp", INT64_MAX, &exp, err,
				sizeof(err))) {
			if (!json_object_is_type(e, json_type_object))
				snprintf(err, sizeof(err), "revoked[%zu]: expected an object", i);
			goto out;
		}
		/*
		 * What a push would carry, checked as the verifiers' decoder
		 * will (msg_auth.c): one bad entry would make every push
		 * malformed, and revocation stop everywhere.
		 */
		if (!jti_ok(v->jti) || exp > AUTH_EXP_MAX) {
			snprintf(err, sizeof(err), "revoked[%zu]: %s", i,
				 !jti_ok(v->jti) ? "jti: not 32 lowercase hex digits" :
				 "exp: out of range");
			goto out;
		}
		for (size_t k = 0; k < r->nrevoked; k++)
			if (!strcmp(r->revoked[k].jti, v->jti)) {
				snprintf(err, sizeof(err), "revoked[%zu]: jti %s given twice",
					 i, v->jti);
				goto out;
			}
		v->exp = (int64_t)exp;
		r->nrevoked++;
	}
	prune(r);
	agent_log("aam: %zu revoked jtis from %s", r->nrevoked, path);
	ret = 0;
out:
	if (ret)
		agent_log("aam: %s: %s", path, err);
	json_object_put(o);
	return ret;
}

static void push_one(struct aam_role *r, struct conn *c)
{
	struct msg_auth m = { .op = AUTH_REVOKED, .revoked = r->revoked,
			      .nrevoked = r->nrevoked };

	if (!agent_msg_send(r->a, c, &msg_auth_type, &m))
		r->pushes++;
}

/* After a change: every peer, and a verifier of this agent (an mg). */
static void push_all(struct aam_role *r)
{
	prune(r);
	for (struct aam_peer *p = r->peers; p; p = p->next)
		push_one(r, p->c);
	if (r->a->tokens)
		agent_tokens_set_revoked(r->a, r->revoked, r->nrevoked);
}

static int jti_ok(const char *s)
{
	return strlen(s) == TOKEN_JTI_LEN &&
	       strspn(s, "0123456789abcdef") == TOKEN_JTI_LEN;
}

int aam_role_revoke(struct aam_role *r, const char *jti, char *err,
		    size_t errlen)
{
	int64_t exp = now_s() + TOKEN_MAX_LIFETIME;

	if (!jti_ok(jti)) {
		snprintf(err, errlen, "\"%.40s\" is not a jti (%d lowercase hex digits)",
			 jti, TOKEN_JTI_LEN);
		return -1;
	}
	prune(r);
	for (size_t i = 0; i < r->nrevoked; i++)
		if (!strcmp(r->revoked[i].jti, jti))
			return 0;	/* already: nothing changes */
	if (r->nrevoked == AUTH_REVOKED_MAX) {
		snprintf(err, errlen, "the revoked list is full (%d unexpired jtis)",
			 AUTH_REVOKED_MAX);
		return -1;
	}
	for (size_t i = 0; i < r->nissued; i++)
		if (!strcmp(r->issued[i].jti, jti))
			exp = r->issued[i].exp;
	snprintf(r->revoked[r->nrevoked].jti, sizeof(r->revoked[0].jti), "%s", jti);
	r->revoked[r->nrevoked++].exp = exp;
	/* not kept, not pushed: a revocation that a restart would forget */
	if (revoked_save(r, err, errlen)) {
		r->nrevoked--;
		return -1;
	}
	r->revokes++;
	agent_log("aam: revoked %s (kept until %lld)%s", jti, (long long)exp,
		  r->shared ? "; to etcd next" : "");
	if (r->shared)
		aam_shared_put(r->shared, &r->revoked[r->nrevoked - 1]);
	push_all(r);
	return 0;
}

/* --- the revoked list shared through etcd (aam_shared.h) ----------------- */

static int by_jti(const void *a, const void *b)
{
	return strcmp(((const struct auth_revoked *)a)->jti,
		      ((const struct auth_revoked *)b)->jti);
}

/*
 * What etcd holds under aam.revoked_prefix (@v, sorted by jti): those we
 * lack are added, kept and pushed; those we hold and etcd lacks (revoked
 * while etcd was down, or before a restore of it) are written to it.
 */
static void on_shared(void *arg, const struct auth_revoked *v, size_t n)
{
	struct aam_role *r = arg;
	size_t held, added = 0, full = 0;
	bool *seen = calloc(n ? n : 1, sizeof(*seen));
	int64_t now = now_s();
	char err[320];

	if (!seen) {
		agent_log("aam: etcd: out of memory: the revoked jtis read are not taken");
		return;
	}
	prune(r);
	held = r->nrevoked;
	for (size_t i = 0; i < held; i++) {
		const struct auth_revoked *f = bsearch(&r->revoked[i], v, n, sizeof(*v),
						       by_jti);

		if (f)
			seen[f - v] = true;
		else
			aam_shared_put(r->shared, &r->revoked[i]);
	}
	for (size_t i = 0; i < n; i++) {
		if (seen[i] || v[i].exp + AAM_REVOKED_GRACE_S < now)
			continue;
		if (r->nrevoked == AUTH_REVOKED_MAX) {
			full++;
			continue;
		}
		r->revoked[r->nrevoked++] = v[i];
		added++;
		agent_log("aam: revoked %s (kept until %lld), from etcd", v[i].jti,
			  (long long)v[i].exp);
	}
	free(seen);
	if (full)
		agent_log("aam: etcd: %zu revoked jtis not taken: the list is full (%d)",
			  full, AUTH_REVOKED_MAX);
	if (!added)
		return;
	r->shared_in += added;
	/* etcd keeps them meanwhile: a failed save costs only a restart's wait */
	if (revoked_save(r, err, sizeof(err)))
		agent_log("aam: %s: %zu revoked jtis from etcd not kept in the file", err,
			  added);
	push_all(r);
}

/* --- requests ------------------------------------------------------------ */

/* At most AAM_LOG_PER_S lines of denials and drops a second. */
static bool log_allowed(struct aam_role *r)
{
	int64_t now = now_s();

	if (now != r->log_second) {
		r->log_second = now;
		r->log_lines = 0;
	}
	return r->log_lines++ < AAM_LOG_PER_S;
}

static void deny(struct aam_role *r, struct conn *c, uint64_t seq,
		 enum deny_reason why, const char *fmt, const char *a1,
		 const char *a2)
{
	struct msg_auth m = { .op = AUTH_DENIED, .re = seq };
	char text[AUTH_REASON_MAX - 16];

	snprintf(text, sizeof(text), fmt, a1, a2);
	snprintf(m.reason, sizeof(m.reason), "%s: %s", deny_names[why], text);
	r->denied[why]++;
	if (log_allowed(r))
		agent_log("aam: denied %s: %s", conn_peer(c)->node, m.reason);
	agent_msg_send(r->a, c, &msg_auth_type, &m);
}

static void request(struct aam_role *r, struct conn *c, uint64_t seq,
		    const struct msg_auth *q)
{
	const struct aam_config *ac = &r->a->cfg.aam;
	struct msg_auth m = { .op = AUTH_TOKEN, .re = seq };
	struct token_claims tc = { 0 };
	const char *node = conn_peer(c)->node;
	bool sub_match = false, node_match = false;
	char err[256], *tok;
	size_t i;

	r->requests++;
	for (i = 0; i < ac->ngrants; i++) {
		if (fnmatch(ac->grants[i].sub, q->sub, 0))
			continue;
		sub_match = true;
		if (fnmatch(ac->grants[i].nodes, node, 0))
			continue;
		node_match = true;
		if (token_scope_allows(ac->grants[i].scope, q->scope))
			break;
	}
	if (i == ac->ngrants) {
		if (node_match)
			deny(r, c, seq, DENY_SCOPE, "no grant of %s allows scope %s",
			     q->sub, q->scope);
		else if (sub_match)
			deny(r, c, seq, DENY_NODE, "no grant of %s for node %s",
			     q->sub, node);
		else
			deny(r, c, seq, DENY_NO_GRANT, "no grant for %s%s", q->sub, "");
		return;
	}
	snprintf(tc.iss, sizeof(tc.iss), "%s", r->a->cfg.node);
	snprintf(tc.sub, sizeof(tc.sub), "%s", q->sub);
	snprintf(tc.node, sizeof(tc.node), "%s", conn_peer(c)->node);
	snprintf(tc.scope, sizeof(tc.scope), "%s", q->scope);
	tc.iat = now_s();
	tc.exp = tc.iat + (int64_t)(q->lifetime_s < ac->lifetime_s ?
				    q->lifetime_s : ac->lifetime_s);
	if (token_sign(r->key, ac->kid, &tc, &tok, err, sizeof(err))) {
		deny(r, c, seq, DENY_SIGN, "%s%s", err, "");
		return;
	}
	snprintf(m.token, sizeof(m.token), "%s", tok);
	free(tok);
	r->issued[r->issued_next].exp = tc.exp;
	memcpy(r->issued[r->issued_next].jti, tc.jti, sizeof(tc.jti));
	r->issued_next = (r->issued_next + 1) % AAM_ISSUED_MAX;
	if (r->nissued < AAM_ISSUED_MAX)
		r->nissued++;
	r->granted++;
	agent_log("aam: token %s for %s on node %s, scope %s, until %lld", tc.jti,
		  tc.sub, tc.node, tc.scope, (long long)tc.exp);
	agent_msg_send(r->a, c, &msg_auth_type, &m);
}

/*
 * May @c's peer have this request answered? Not while AAM_BACKLOG bytes
 * wait unsent to it, nor above AAM_RATE a second: dropped and counted.
 */
static bool request_allowed(struct aam_role *r, struct conn *c)
{
	int64_t now = agent_now_ms();
	struct aam_peer *p;

	for (p = r->peers; p && p->c != c; p = p->next)
		;
	if (!p)
		return false;	/* not one of ours: aam_role_peer_up() failed */
	if (conn_pending(c) > AAM_BACKLOG) {
		r->backlogged++;
		if (log_allowed(r))
			agent_log("aam: %s does not read its answers (%zu bytes wait): request dropped",
				  conn_peer(c)->node, conn_pending(c));
		return false;
	}
	p->credit += (double)(now - p->credit_ms) * AAM_RATE / 1000.0;
	if (p->credit > AAM_BURST)
		p->credit = AAM_BURST;
	p->credit_ms = now;
	if (p->credit < 1) {
		r->rate_limited++;
		if (log_allowed(r))
			agent_log("aam: %s asks more than %d tokens a second: request dropped",
				  conn_peer(c)->node, AAM_RATE);
		return false;
	}
	p->credit -= 1;
	return true;
}

void aam_role_frame(struct aam_role *r, struct conn *c, const struct msg *m)
{
	const struct msg_auth *q = m->body;
	char why[128];

	if (q->op != AUTH_REQUEST) {
		/* tokens and revocations come from an AAM, not to it */
		snprintf(why, sizeof(why), "type 3 op %s: only the AAM sends it",
			 msg_auth_op_name(q->op));
		reject_note(&r->a->rej, "type", conn_peer(c)->node, why);
		return;
	}
	if (!request_allowed(r, c))
		return;
	request(r, c, m->seq, q);
}

/* --- peers --------------------------------------------------------------- */

void aam_role_peer_up(struct aam_role *r, struct conn *c)
{
	struct aam_peer *p = calloc(1, sizeof(*p));

	if (!p) {
		/* it gets no revoked lists and its requests are dropped */
		r->peers_lost++;
		agent_log("aam: %s: out of memory: no revoked lists, no tokens for it",
			  conn_peer(c)->node);
		return;
	}
	p->c = c;
	p->credit = AAM_BURST;
	p->credit_ms = agent_now_ms();
	p->next = r->peers;
	r->peers = p;
	prune(r);
	push_one(r, c);
}

void aam_role_peer_down(struct aam_role *r, struct conn *c)
{
	for (struct aam_peer **pp = &r->peers; *pp; pp = &(*pp)->next)
		if ((*pp)->c == c) {
			struct aam_peer *p = *pp;

			*pp = p->next;
			free(p);
			return;
		}
}

/* --- the role ------------------------------------------------------------ */

struct aam_role *aam_role_start(struct agent *a)
{
	const struct aam_config *ac = &a->cfg.aam;
	struct aam_role *r;
	FILE *f;

	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->a = a;
	r->revoked = calloc(AUTH_REVOKED_MAX, sizeof(*r->revoked));
	r->issued = calloc(AAM_ISSUED_MAX, sizeof(*r->issued));
	if (!r->revoked || !r->issued)
		goto fail;
	f = fopen(ac->key, "re");
	if (!f) {
		agent_log("aam.key: %s: %s", ac->key, strerror(errno));
		goto fail;
	}
	r->key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (!r->key || EVP_PKEY_id(r->key) != EVP_PKEY_ED25519) {
		agent_log("aam.key: %s: not a PEM Ed25519 private key", ac->key);
		goto fail;
	}
	if (revoked_load(r))
		goto fail;
	if (a->cfg.srd.etcd[0]) {
		char err[320];

		r->shared = aam_shared_start(a->base, a->cfg.srd.etcd,
					     ac->revoked_prefix, a->cfg.node,
					     AAM_REVOKED_GRACE_S, on_shared, r, err,
					     sizeof(err));
		if (!r->shared) {
			agent_log("aam: %s", err);
			goto fail;
		}
		agent_log("aam: revocations shared under %s on %s", ac->revoked_prefix,
			  a->cfg.srd.etcd);
	}
	if (a->tokens)
		agent_tokens_set_revoked(a, r->revoked, r->nrevoked);
	agent_log("aam: issuing tokens as kid %s, %zu grants, lifetime up to %u s",
		  ac->kid, ac->ngrants, ac->lifetime_s);
	return r;
fail:
	aam_role_stop(r);
	return NULL;
}

void aam_role_stop(struct aam_role *r)
{
	if (!r)
		return;
	aam_shared_stop(r->shared);
	while (r->peers) {
		struct aam_peer *p = r->peers;

		r->peers = p->next;
		free(p);
	}
	EVP_PKEY_free(r->key);
	free(r->revoked);
	free(r->issued);
	free(r);
}

struct json_object *aam_role_show(struct aam_role *r)
{
	struct json_object *o = json_object_new_object(), *d, *arr;
	uint64_t total = 0;

	prune(r);
	d = json_object_new_object();
	for (int i = 0; i < DENY_N; i++) {
		json_object_object_add(d, deny_names[i], json_object_new_uint64(r->denied[i]));
		total += r->denied[i];
	}
	arr = revoked_json(r);
	json_object_object_add(o, "kid", json_object_new_string(r->a->cfg.aam.kid));
	json_object_object_add(o, "grants", json_object_new_uint64(r->a->cfg.aam.ngrants));
	json_object_object_add(o, "lifetime_s", json_object_new_uint64(r->a->cfg.aam.lifetime_s));
	json_object_object_add(o, "requests", json_object_new_uint64(r->requests));
	json_object_object_add(o, "issued", json_object_new_uint64(r->granted));
	json_object_object_add(o, "denied", json_object_new_uint64(total));
	json_object_object_add(o, "denied_by_reason", d);
	json_object_object_add(o, "revokes", json_object_new_uint64(r->revokes));
	json_object_object_add(o, "revoked", arr);
	json_object_object_add(o, "revoked_pushes", json_object_new_uint64(r->pushes));
	json_object_object_add(o, "rate_limited", json_object_new_uint64(r->rate_limited));
	json_object_object_add(o, "backlogged", json_object_new_uint64(r->backlogged));
	json_object_object_add(o, "peers_lost", json_object_new_uint64(r->peers_lost));
	if (r->shared) {
		json_object_object_add(o, "revoked_shared_in", json_object_new_uint64(r->shared_in));
		aam_shared_show(r->shared, o);
	}
	return o;
}
