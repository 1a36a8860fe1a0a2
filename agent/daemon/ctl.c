// SPDX-License-Identifier: GPL-2.0
/*
 * The local control socket (agent.h): a Unix stream socket, mode 0660, so
 * that root and the socket's group may ask; the CLI (dmsc agent) is its
 * client. One request per connection, one line of JSON:
 *
 *   { "show": "instances" | "routes" | "peers" | "policies" | "rsvp" | "qos" | "nodes" | "mg" |
 *             "aam" | "rejected" }
 *   { "register": { "id", "sid", "prefix", "rtype", "capability",
 *                   "state", "node" (optional: this node) } }
 *                                        (sr: an instance of this node)
 *   { "deregister": "ID" }
 *   { "policy_apply": { "policies": [ policy... ] } }   (smo: msg_policy.h)
 *   { "policy_withdraw": "NAME" }                         (smo)
 *   { "aam_revoke": "JTI" }                               (aam)
 *   { "backup": "NAME" }            (srd, SQLite: a new file of the store's directory)
 *   { "token": { "sub", "scope", "lifetime_s" (optional) } }
 *                          (sr: asks the AAM; the answer waits for its)
 *   { "access": { "token": T, "prefix": P } }  (sr: verified offline)
 *
 * and one line back, { "ok": true, "data": ... } or { "ok": false,
 * "error": "..." }, then the agent closes. Requests are read with the
 * strict reader, at most CTL_MAX bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#include "agent.h"
#include "json_strict.h"
#include "log.h"
#include "msg_reg.h"
#include "tokens.h"

/* a policy file of some hundred tunnels fits */
#define CTL_MAX	(1 << 20)

struct ctl {
	struct agent *a;
	struct evconnlistener *ln;
	char path[108];
	struct ctl_req *pending;	/* requests whose answer waits */
};

/*
 * A request answered later (sr: a token from the AAM): owned by the role
 * that answers it, which calls ctl_req_done() once, always (on the
 * answer, a timeout, or its stop). The client's connection may end
 * before: then bev is NULL and the answer goes nowhere.
 */
struct ctl_req {
	struct ctl *c;
	struct bufferevent *bev;
	struct ctl_req *next, **pprev;
};

static struct json_object *fail(const char *fmt, const char *what)
{
	struct json_object *o = json_object_new_object();
	char e[320];

	snprintf(e, sizeof(e), fmt, what);
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(e));
	return o;
}

static struct json_object *ok(struct json_object *data)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object_object_add(o, "data", data);
	return o;
}

static struct json_object *show(struct agent *a, const char *what)
{
	struct json_object *d = json_object_new_object();

	if (!strcmp(what, "rejected")) {
		json_object_put(d);
		return ok(reject_json(&a->rej));
	}
	if (!strcmp(what, "policies")) {
		/* the smo's desired set; the sr's desired and installed */
		if (a->smo)
			json_object_object_add(d, "smo", smo_role_show(a->smo));
		if (a->sr)
			json_object_object_add(d, "sr", sr_role_show(a->sr, what));
		return ok(d);
	}
	if (!strcmp(what, "qos")) {
		/* the smo's table of reports; the sr's reports made */
		if (a->smo)
			json_object_object_add(d, "smo", smo_role_show_qos(a->smo));
		if (a->sr)
			json_object_object_add(d, "sr", sr_role_show(a->sr, what));
		return ok(d);
	}
	if (!strcmp(what, "nodes")) {
		/* the smo's table of node state reports; the sr's reports made */
		if (a->smo)
			json_object_object_add(d, "smo", smo_role_show_nodes(a->smo));
		if (a->sr)
			json_object_object_add(d, "sr", sr_role_show(a->sr, what));
		return ok(d);
	}
	if (!strcmp(what, "mg")) {
		/* the gateway: its routes, requests, refusals and choices */
		if (a->mg)
			json_object_object_add(d, "mg", mg_role_show(a->mg));
		return ok(d);
	}
	if (!strcmp(what, "aam")) {
		/* the issuer's counts; a verifier's token requests and checks */
		if (a->aam)
			json_object_object_add(d, "aam", aam_role_show(a->aam));
		if (a->sr)
			json_object_object_add(d, "sr", sr_role_show(a->sr, what));
		if (a->tokens)
			json_object_object_add(d, "tokens", agent_tokens_show(a));
		return ok(d);
	}
	if (!strcmp(what, "rsvp")) {
		/* the sr role's speaker (sr.rsvp) */
		if (a->sr)
			json_object_object_add(d, "sr", sr_role_show(a->sr, what));
		return ok(d);
	}
	if (strcmp(what, "instances") && strcmp(what, "routes") &&
	    strcmp(what, "peers")) {
		json_object_put(d);
		return fail("show: \"%s\" is not instances, routes, peers, policies, rsvp, qos, nodes, mg, aam or rejected",
			    what);
	}
	if (a->srd && strcmp(what, "routes"))
		json_object_object_add(d, "srd", srd_role_show(a->srd, what));
	if (a->sr)
		json_object_object_add(d, "sr", sr_role_show(a->sr, what));
	return ok(d);
}

static struct json_object *do_register(struct agent *a, struct json_object *v)
{
	static const char *const keys[] = {
		"id", "node", "sid", "prefix", "rtype", "capability", "state", NULL,
	};
	struct msg_instance m = { 0 };
	char err[256];
	uint64_t cap;

	if (!a->sr)
		return fail("register: %s runs no sr role", a->cfg.node);
	if (!json_object_is_type(v, json_type_object))
		return fail("register: %s", "expected an object");
	if (msg_keys_only(v, "register", keys, NULL, err, sizeof(err)) ||
	    msg_get_string(v, "register", "id", m.id, sizeof(m.id), err, sizeof(err)) ||
	    msg_get_string(v, "register", "sid", m.sid, sizeof(m.sid), err, sizeof(err)) ||
	    msg_get_string(v, "register", "prefix", m.prefix, sizeof(m.prefix), err, sizeof(err)) ||
	    msg_get_string(v, "register", "rtype", m.rtype, sizeof(m.rtype), err, sizeof(err)) ||
	    msg_get_u64(v, "register", "capability", UINT32_MAX, &cap, err, sizeof(err)) ||
	    msg_get_string(v, "register", "state", m.state, sizeof(m.state), err, sizeof(err)))
		return fail("%s", err);
	m.capability = (uint32_t)cap;
	/* the node is this one unless the client says (sr_role_register checks) */
	snprintf(m.node, sizeof(m.node), "%s", a->cfg.node);
	if (json_object_object_get_ex(v, "node", NULL) &&
	    msg_get_string(v, "register", "node", m.node, sizeof(m.node), err, sizeof(err)))
		return fail("%s", err);
	if (sr_role_register(a->sr, &m, err, sizeof(err)))
		return fail("register: %s", err);
	return ok(json_object_new_string(m.id));
}

static void req_unlink(struct ctl_req *q)
{
	if (q->pprev) {
		*q->pprev = q->next;
		if (q->next)
			q->next->pprev = q->pprev;
	}
	q->pprev = NULL;
	q->next = NULL;
}

static void write_resp(struct bufferevent *bev, struct json_object *resp);

void ctl_req_done(struct ctl_req *q, struct json_object *data,
		  const char *error)
{
	struct json_object *resp = data ? ok(data) : fail("%s", error);

	req_unlink(q);
	if (q->bev)
		write_resp(q->bev, resp);
	json_object_put(resp);
	free(q);
}

static void on_pending_event(struct bufferevent *bev, short what, void *arg)
{
	struct ctl_req *q = arg;

	(void)what;
	bufferevent_free(bev);
	req_unlink(q);
	q->bev = NULL;
}

/* A request that waits: its own struct, with the role from here on. */
static struct json_object *do_token(struct ctl *c, struct bufferevent *bev,
				    struct json_object *v)
{
	struct ctl_req *q;
	char err[320];

	if (!c->a->sr)
		return fail("token: %s runs no sr role", c->a->cfg.node);
	q = calloc(1, sizeof(*q));
	if (!q)
		return fail("token: %s", "out of memory");
	q->c = c;
	q->bev = bev;
	q->next = c->pending;
	if (q->next)
		q->next->pprev = &q->next;
	q->pprev = &c->pending;
	c->pending = q;
	if (sr_role_token(c->a->sr, v, q, err, sizeof(err))) {
		req_unlink(q);
		free(q);
		return fail("token: %s", err);
	}
	bufferevent_disable(bev, EV_READ);
	bufferevent_setcb(bev, NULL, NULL, on_pending_event, q);
	return NULL;
}

static struct json_object *handle(struct ctl *c, struct bufferevent *bev,
				  const char *line, size_t len)
{
	struct agent *a = c->a;
	struct json_object *req, *v, *resp, *d;
	char err[256];

	req = json_strict_parse(line, len, &JSON_STRICT_WIRE, err, sizeof(err));
	if (!req)
		return fail("request: %s", err);
	if (!json_object_is_type(req, json_type_object) ||
	    json_object_object_length(req) != 1) {
		resp = fail("request: %s", "expected an object of one key");
	} else if (json_object_object_get_ex(req, "show", &v)) {
		resp = json_object_is_type(v, json_type_string) ?
		       show(a, json_object_get_string(v)) :
		       fail("show: %s", "expected a string");
	} else if (json_object_object_get_ex(req, "register", &v)) {
		resp = do_register(a, v);
	} else if (json_object_object_get_ex(req, "deregister", &v)) {
		if (!a->sr)
			resp = fail("deregister: %s runs no sr role", a->cfg.node);
		else if (!json_object_is_type(v, json_type_string))
			resp = fail("deregister: %s", "expected an id");
		else if (sr_role_deregister(a->sr, json_object_get_string(v), err,
					    sizeof(err)))
			resp = fail("deregister: %s", err);
		else
			resp = ok(json_object_new_string(json_object_get_string(v)));
#ifdef DMSC_TEST_HOOKS
	} else if (json_object_object_get_ex(req, "test_drop_route", &v)) {
		/* the test build only: a route lost behind the SRD's back */
		if (!a->sr || !json_object_is_type(v, json_type_string) ||
		    sr_role_test_drop_route(a->sr, json_object_get_string(v)))
			resp = fail("test_drop_route: %s", "no such route");
		else
			resp = ok(json_object_new_string(json_object_get_string(v)));
	} else if (json_object_object_get_ex(req, "test_fail_list", &v)) {
		/* the test build only: the store failing the srd's full tables */
		if (!a->srd || !json_object_is_type(v, json_type_int))
			resp = fail("test_fail_list: %s", "no srd role, or not a count");
		else {
			srd_role_test_fail_list(a->srd, (unsigned int)json_object_get_int(v));
			resp = ok(json_object_new_int(json_object_get_int(v)));
		}
	} else if (json_object_object_get_ex(req, "test_peer_backlog", &v)) {
		/* the test build only: the srd's cap on a peer's unsent bytes */
		if (!a->srd || !json_object_is_type(v, json_type_int) ||
		    json_object_get_int64(v) < 0)
			resp = fail("test_peer_backlog: %s", "no srd role, or not a byte count");
		else {
			srd_role_test_peer_backlog(a->srd, (size_t)json_object_get_int64(v));
			resp = ok(json_object_new_int64(json_object_get_int64(v)));
		}
#endif
	} else if (json_object_object_get_ex(req, "policy_apply", &v)) {
		if (!a->smo)
			resp = fail("policy apply: %s runs no smo role", a->cfg.node);
		else if (smo_role_apply(a->smo, v, err, sizeof(err)))
			resp = fail("policy apply: %s", err);
		else
			resp = ok(smo_role_show(a->smo));
	} else if (json_object_object_get_ex(req, "policy_withdraw", &v)) {
		if (!a->smo)
			resp = fail("policy withdraw: %s runs no smo role", a->cfg.node);
		else if (!json_object_is_type(v, json_type_string))
			resp = fail("policy withdraw: %s", "expected a name");
		else if (smo_role_withdraw(a->smo, json_object_get_string(v), err,
					   sizeof(err)))
			resp = fail("policy withdraw: %s", err);
		else
			resp = ok(json_object_new_string(json_object_get_string(v)));
	} else if (json_object_object_get_ex(req, "backup", &v)) {
		if (!a->srd)
			resp = fail("backup: %s runs no srd", a->cfg.node);
		else if (!json_object_is_type(v, json_type_string))
			resp = fail("backup: %s", "expected a file name");
		else if (!(d = srd_role_backup(a->srd, json_object_get_string(v), err,
						sizeof(err))))
			resp = fail("%s", err);
		else
			resp = ok(d);
	} else if (json_object_object_get_ex(req, "aam_revoke", &v)) {
		if (!a->aam)
			resp = fail("aam revoke: %s issues no tokens (no aam section)", a->cfg.node);
		else if (!json_object_is_type(v, json_type_string))
			resp = fail("aam revoke: %s", "expected a jti");
		else if (aam_role_revoke(a->aam, json_object_get_string(v), err,
					 sizeof(err)))
			resp = fail("aam revoke: %s", err);
		else
			resp = ok(aam_role_show(a->aam));
	} else if (json_object_object_get_ex(req, "token", &v)) {
		resp = do_token(c, bev, v);
	} else if (json_object_object_get_ex(req, "access", &v)) {
		if (!a->sr)
			resp = fail("access: %s runs no sr role", a->cfg.node);
		else if (!(d = sr_role_access(a->sr, v, err, sizeof(err))))
			resp = fail("access: %s", err);
		else
			resp = ok(d);
	} else {
		resp = fail("request: %s", "unknown; show, register, deregister, policy_apply, policy_withdraw, aam_revoke, backup, token or access");
	}
	json_object_put(req);
	return resp;
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	(void)what;
	(void)arg;
	bufferevent_free(bev);
}

static void on_written(struct bufferevent *bev, void *arg)
{
	(void)arg;
	if (!evbuffer_get_length(bufferevent_get_output(bev)))
		bufferevent_free(bev);
}

/* One line back, then the connection ends once it is written. */
static void write_resp(struct bufferevent *bev, struct json_object *resp)
{
	const char *text = json_object_to_json_string_ext(resp,
			JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);

	bufferevent_disable(bev, EV_READ);
	bufferevent_write(bev, text, strlen(text));
	bufferevent_write(bev, "\n", 1);
	bufferevent_setcb(bev, NULL, on_written, on_event, NULL);
}

static void on_read(struct bufferevent *bev, void *arg)
{
	struct ctl *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct evbuffer_ptr eol = evbuffer_search_eol(in, NULL, NULL, EVBUFFER_EOL_LF);
	struct json_object *resp;

	if (eol.pos < 0) {
		if (evbuffer_get_length(in) <= CTL_MAX)
			return;
		resp = fail("request: longer than %s bytes", "1048576");
	} else {
		resp = handle(c, bev, (const char *)evbuffer_pullup(in, eol.pos),
			      (size_t)eol.pos);
		if (!resp)
			return;	/* answered later: ctl_req_done() */
	}
	write_resp(bev, resp);
	json_object_put(resp);
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd,
		      struct sockaddr *sa, int salen, void *arg)
{
	struct ctl *c = arg;
	struct bufferevent *bev;

	(void)l;
	(void)sa;
	(void)salen;
	bev = bufferevent_socket_new(c->a->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!bev) {
		close(fd);
		return;
	}
	bufferevent_setcb(bev, on_read, NULL, on_event, c);
	bufferevent_enable(bev, EV_READ);
}

struct ctl *ctl_start(struct agent *a, const char *path)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct ctl *c = calloc(1, sizeof(*c));
	mode_t old;

	if (!c)
		return NULL;
	c->a = a;
	snprintf(c->path, sizeof(c->path), "%s", path);
	snprintf(un.sun_path, sizeof(un.sun_path), "%s", path);
	unlink(path);	/* a socket left by an agent that died */
	/* no moment at which the socket is open to all */
	old = umask(0117);
	c->ln = evconnlistener_new_bind(a->base, on_accept, c,
					LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC,
					16, (struct sockaddr *)&un, sizeof(un));
	umask(old);
	if (!c->ln) {
		agent_log("control: %s: %s", path, strerror(errno));
		free(c);
		return NULL;
	}
	chmod(path, 0660);
	agent_log("control socket %s", path);
	return c;
}

void ctl_stop(struct ctl *c)
{
	if (!c)
		return;
	/* the roles still answer these (ctl_req_done), to no one */
	while (c->pending) {
		struct ctl_req *q = c->pending;

		bufferevent_free(q->bev);
		q->bev = NULL;
		req_unlink(q);
	}
	evconnlistener_free(c->ln);
	unlink(c->path);
	free(c);
}
