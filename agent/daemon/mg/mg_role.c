// SPDX-License-Identifier: GPL-2.0
/*
 * The mg role, the gateway (draft-yang-dmsc-distributed-model-04: the
 * unified entry point for external requests):
 *  - a mutual-TLS connection to an SRD of mg.srd, the next one after a
 *    failure, with a backoff from 100 ms doubling to 5 s, as the sr role;
 *  - the route table (type 2) the SRD pushes, kept by route_table.c as an
 *    SR keeps it: by revision, a gap asks for the full table, and every
 *    mg.digest_interval_ms the table's digest goes to the SRD;
 *  - on the same connection, the AAM's revoked list (type 3 "revoked"),
 *    which the token check (tokens.c) refuses;
 *  - an HTTP entry on mg.listen (mg_http.c): a client with a service
 *    access token of the AAM asks for a service prefix and gets one of
 *    its active instances, chosen by smooth weighted round robin on the
 *    instances' capability (mg_pick.c);
 *  - the counters of requests by outcome, of refusals by reason, and of
 *    choices by service prefix and instance, for "dmsc agent show mg".
 * The gateway resolves; it does not carry the client's traffic: the
 * client connects to the chosen instance's SID itself.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mg.h"
#include "msg_auth.h"
#include "reject.h"
#include "tokens.h"

#define BACKOFF_MIN_MS	100
#define BACKOFF_MAX_MS	5000

const char *const mg_outcome_names[MG_OUTCOMES] = {
	[MG_OK] = "ok", [MG_BAD_REQUEST] = "bad_request",
	[MG_UNAUTHORIZED] = "unauthorized", [MG_FORBIDDEN] = "forbidden",
	[MG_NOT_FOUND] = "not_found", [MG_METHOD] = "method_not_allowed",
	[MG_UNAVAILABLE] = "unavailable",
};

const char *const mg_reason_names[MG_REASONS] = {
	[MG_R_METHOD] = "method", [MG_R_PATH] = "path", [MG_R_QUERY] = "query",
	[MG_R_TOKEN_MISSING] = "token-missing",
	[MG_R_TOKEN_SCHEME] = "token-scheme",
	[MG_R_TOKEN_SIGNATURE] = "token-signature",
	[MG_R_TOKEN_EXPIRED] = "token-expired",
	[MG_R_TOKEN_REVOKED] = "token-revoked",
	[MG_R_TOKEN_NODE] = "token-node",
	[MG_R_TOKEN_INVALID] = "token-invalid", [MG_R_SCOPE] = "scope",
	[MG_R_NO_SERVICE] = "no-service", [MG_R_NO_ACTIVE] = "no-active",
};

/* --- the choice ---------------------------------------------------------- */

static void mask(struct in6_addr *a, unsigned int len)
{
	for (unsigned int i = 0; i < 16; i++) {
		unsigned int keep = len >= 8 * (i + 1) ? 8 : len > 8 * i ? len - 8 * i : 0;

		a->s6_addr[i] &= (uint8_t)(0xff00u >> keep);
	}
}

static bool same_prefix(const char *text, const struct in6_addr *addr,
			unsigned int len)
{
	struct in6_addr a;
	unsigned int l;

	if (!mg_prefix_parse(text, &a, &l) || l != len)
		return false;
	mask(&a, l);
	return !memcmp(&a, addr, sizeof(a));
}

/* The instances of @s's prefix in the table as it is now. */
static int service_build(struct mg_role *r, struct mg_service *s)
{
	struct wrr_member *m = NULL;
	size_t n = 0, cap = 0;

	s->ninst = 0;
	for (size_t i = 0; i < r->rt.n; i++) {
		const struct msg_instance *x = &r->rt.routes[i];

		if (!same_prefix(x->prefix, &s->addr, s->len))
			continue;
		s->ninst++;
		/* pending and faulted instances take no requests */
		if (strcmp(x->state, "active"))
			continue;
		if (n == cap) {
			void *p;

			cap = cap ? 2 * cap : 8;
			p = realloc(m, cap * sizeof(*m));
			if (!p) {
				free(m);
				return -1;
			}
			m = p;
		}
		memset(&m[n], 0, sizeof(m[n]));
		m[n].inst = *x;
		m[n].weight = wrr_weight(x->capability);
		n++;
	}
	wrr_set_replace(&s->set, m, n);
	s->gen = r->rt.gen;
	return 0;
}

static struct mg_service *service_get(struct mg_role *r,
				      const struct in6_addr *addr,
				      unsigned int len)
{
	struct mg_service *s;
	size_t i;

	for (i = 0; i < r->nsvc; i++)
		if (r->svc[i].len == len && !memcmp(&r->svc[i].addr, addr, sizeof(*addr)))
			return &r->svc[i];
	/*
	 * A new entry only for a prefix some instance has, so a client
	 * cannot grow this table by asking: it is bounded by the routes'.
	 */
	for (i = 0; i < r->rt.n && !same_prefix(r->rt.routes[i].prefix, addr, len); i++)
		;
	if (i == r->rt.n)
		return NULL;
	if (r->nsvc == r->svc_cap) {
		size_t cap = r->svc_cap ? 2 * r->svc_cap : 16;
		void *p = realloc(r->svc, cap * sizeof(*r->svc));

		if (!p)
			return NULL;
		r->svc = p;
		r->svc_cap = cap;
	}
	s = &r->svc[r->nsvc++];
	memset(s, 0, sizeof(*s));
	s->addr = *addr;
	s->len = len;
	snprintf(s->prefix, sizeof(s->prefix), "%s", r->rt.routes[i].prefix);
	s->gen = r->rt.gen - 1;		/* built at the first use */
	return s;
}

int mg_resolve(struct mg_role *r, const struct in6_addr *addr,
	       unsigned int len, struct msg_instance *out)
{
	struct in6_addr a = *addr;
	struct mg_service *s;
	ssize_t k;

	mask(&a, len);
	s = service_get(r, &a, len);
	if (!s)
		return MG_R_NO_SERVICE;
	/* rebuilt when the table changed since: a request in between is O(n) of the service */
	if (s->gen != r->rt.gen && service_build(r, s))
		return MG_R_NO_ACTIVE;
	if (!s->ninst) {
		/* its last instance left: the entry goes, the table stays bounded */
		wrr_set_free(&s->set);
		*s = r->svc[--r->nsvc];
		return MG_R_NO_SERVICE;
	}
	k = wrr_pick(&s->set);
	if (k < 0)
		return MG_R_NO_ACTIVE;
	s->chosen++;
	*out = s->set.m[k].inst;
	return 0;
}

bool mg_log_allowed(struct mg_role *r)
{
	int64_t sec = agent_now_ms() / 1000;

	if (sec != r->log_second) {
		if (r->log_suppressed)
			agent_log("mg: %llu refusals not logged (mg.log_per_s %u)",
				  (unsigned long long)r->log_suppressed,
				  r->a->cfg.mg.log_per_s);
		r->log_second = sec;
		r->log_lines = 0;
		r->log_suppressed = 0;
	}
	if (r->log_lines >= r->a->cfg.mg.log_per_s) {
		r->log_suppressed++;
		r->log_suppressed_total++;
		return false;
	}
	r->log_lines++;
	return true;
}

void mg_count(struct mg_role *r, enum mg_outcome o, int reason,
	      const char *client, const char *detail)
{
	r->outcomes[o]++;
	if (o == MG_OK)
		return;
	r->reasons[reason]++;
	if (mg_log_allowed(r))
		agent_log("mg: refused %s: %s: %s", client,
			  mg_reason_names[reason], detail);
}

/* --- the SRD connection ---------------------------------------------- */

static void retry_later(struct mg_role *r)
{
	struct timeval tv = { r->backoff_ms / 1000, r->backoff_ms % 1000 * 1000 };

	event_add(r->retry_ev, &tv);
	r->backoff_ms = r->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS :
							      r->backoff_ms * 2;
}

static int on_up(struct conn *c, void *arg)
{
	struct mg_role *r = arg;

	r->up = 1;
	r->connects++;
	r->backoff_ms = BACKOFF_MIN_MS;
	route_table_conn_up(&r->rt, c);
	agent_log("mg: connected to srd %s", conn_peer(c)->node);
	return 0;
}

/*
 * Type 3 from the controller: the gateway asks the AAM for nothing, so
 * the one op it takes is the AAM's revoked list, from a peer whose
 * certificate has the aam role; it replaces the verifier's set whole.
 */
static void auth_frame(struct mg_role *r, struct conn *c,
		       const struct msg_auth *b)
{
	char why[128];

	if (!(conn_peer(c)->roles & ROLE_AAM) || b->op != AUTH_REVOKED) {
		snprintf(why, sizeof(why), "type 3 op %s to a gateway from a peer %s",
			 msg_auth_op_name(b->op),
			 b->op != AUTH_REVOKED ? "(a gateway asks for no tokens)" :
			 "whose certificate has no aam role");
		reject_note(&r->a->rej, b->op != AUTH_REVOKED ? "type" : "role",
			    conn_peer(c)->node, why);
		return;
	}
	r->revoked_pushes++;
	if (agent_tokens_set_revoked(r->a, b->revoked, b->nrevoked))
		agent_log("mg: the AAM's revoked list: out of memory");
}

static int on_frame(struct conn *c, const unsigned char *p, size_t len,
		    void *arg)
{
	struct mg_role *r = arg;
	struct msg m;

	if (agent_msg_accept(r->a, c, p, len, MSG_BIT(MSG_ROUTES) | MSG_BIT(MSG_AUTH), &m))
		return 0;
	if (m.type->type == MSG_AUTH)
		auth_frame(r, c, m.body);
	else
		route_table_apply(&r->rt, m.body);
	msg_free(&m);
	return 0;
}

static void on_down(struct conn *c, const char *why, void *arg)
{
	struct mg_role *r = arg;

	agent_conn_down(r->a, c, r->up, "mg", why);
	r->c = NULL;
	r->up = 0;
	route_table_conn_down(&r->rt);
	/* the next SRD, if there are several; the table stays meanwhile */
	r->srd = (r->srd + 1) % r->a->cfg.mg.nsrd;
	retry_later(r);
}

static const struct conn_ops mg_conn_ops = { on_up, on_frame, on_down };

static void connect_srd(struct mg_role *r)
{
	const typeof(r->a->cfg.mg.srd[0]) *s = &r->a->cfg.mg.srd[r->srd];
	struct sockaddr_storage sa;
	socklen_t len;

	config_addr_parse(s->address, &sa, &len);
	r->c = conn_new(r->a->base, r->a->tls_client, 0, -1,
			(struct sockaddr *)&sa, (int)len, s->node, 0,
			&mg_conn_ops, r);
	if (!r->c) {
		agent_log("mg: cannot connect to srd %s at %s", s->node, s->address);
		r->srd = (r->srd + 1) % r->a->cfg.mg.nsrd;
		retry_later(r);
	}
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	connect_srd(arg);
}

static void on_digest(evutil_socket_t fd, short what, void *arg)
{
	struct mg_role *r = arg;

	(void)fd;
	(void)what;
	if (r->up && r->rt.synced && !r->rt.sync_asked)
		route_table_send_digest(&r->rt);
}

/* --- the role ------------------------------------------------------------ */

struct mg_role *mg_role_start(struct agent *a)
{
	struct mg_role *r = calloc(1, sizeof(*r));
	unsigned int ms = a->cfg.mg.digest_interval_ms;

	if (!r)
		return NULL;
	r->a = a;
	r->backoff_ms = BACKOFF_MIN_MS;
	r->retry_ev = evtimer_new(a->base, on_retry, r);
	if (!r->retry_ev || route_table_init(&r->rt, a, "mg", ms))
		goto fail;
	if (ms) {
		struct timeval dg = { ms / 1000, ms % 1000 * 1000 };

		r->dg_ev = event_new(a->base, -1, EV_PERSIST, on_digest, r);
		if (!r->dg_ev || event_add(r->dg_ev, &dg))
			goto fail;
	}
	r->http = mg_http_start(r);
	if (!r->http)
		goto fail;
	connect_srd(r);
	return r;
fail:
	mg_role_stop(r);
	return NULL;
}

void mg_role_stop(struct mg_role *r)
{
	if (!r)
		return;
	mg_http_stop(r->http);
	if (r->c)
		conn_close(r->c);
	if (r->retry_ev)
		event_free(r->retry_ev);
	if (r->dg_ev)
		event_free(r->dg_ev);
	for (size_t i = 0; i < r->nsvc; i++)
		wrr_set_free(&r->svc[i].set);
	free(r->svc);
	route_table_free(&r->rt);
	free(r);
}

struct json_object *mg_role_show(struct mg_role *r)
{
	struct json_object *o = json_object_new_object(), *x, *arr;

	json_object_object_add(o, "listen", json_object_new_string(r->a->cfg.mg.listen));
	x = json_object_new_object();
	json_object_object_add(x, "node", json_object_new_string(r->a->cfg.mg.srd[r->srd].node));
	json_object_object_add(x, "address", json_object_new_string(r->a->cfg.mg.srd[r->srd].address));
	json_object_object_add(x, "up", json_object_new_boolean(r->up));
	json_object_object_add(x, "connects", json_object_new_uint64(r->connects));
	json_object_object_add(x, "revoked_pushes", json_object_new_uint64(r->revoked_pushes));
	json_object_object_add(o, "srd", x);
	json_object_object_add(o, "tokens", agent_tokens_show(r->a));
	x = json_object_new_object();
	route_table_json(&r->rt, x, 0);
	json_object_object_add(x, "count", json_object_new_uint64(r->rt.n));
	json_object_object_add(o, "routes", x);
	x = json_object_new_object();
	for (int i = 0; i < MG_OUTCOMES; i++)
		json_object_object_add(x, mg_outcome_names[i],
				       json_object_new_uint64(r->outcomes[i]));
	json_object_object_add(o, "requests", x);
	x = json_object_new_object();
	for (int i = 0; i < MG_REASONS; i++)
		json_object_object_add(x, mg_reason_names[i],
				       json_object_new_uint64(r->reasons[i]));
	json_object_object_add(o, "refused", x);
	json_object_object_add(o, "refusals_not_logged",
			       json_object_new_uint64(r->log_suppressed_total));
	arr = json_object_new_array();
	for (size_t i = 0; i < r->nsvc; i++) {
		struct mg_service *s = &r->svc[i];
		struct json_object *inst = json_object_new_object();

		x = json_object_new_object();
		json_object_object_add(x, "prefix", json_object_new_string(s->prefix));
		json_object_object_add(x, "chosen", json_object_new_uint64(s->chosen));
		json_object_object_add(x, "instances", json_object_new_uint64(s->ninst));
		json_object_object_add(x, "active", json_object_new_uint64(s->set.n));
		/* as of the last choice: the set is rebuilt at the next one */
		for (size_t k = 0; k < s->set.n; k++)
			json_object_object_add(inst, s->set.m[k].inst.id,
					       json_object_new_uint64(s->set.m[k].chosen));
		json_object_object_add(x, "chosen_by_instance", inst);
		json_object_array_add(arr, x);
	}
	json_object_object_add(o, "services", arr);
	json_object_object_add(o, "http", mg_http_show(r->http));
	return o;
}
