// SPDX-License-Identifier: GPL-2.0
/*
 * The gateway's HTTP entry (libmicrohttpd), on mg.listen:
 *
 *   GET /v1/resolve?prefix=ADDR/LEN
 *   Authorization: Bearer TOKEN
 *
 * 200 {"id","node","sid","prefix","rtype","capability"}: an active
 * instance of the service prefix, chosen by mg_resolve(). Refused with
 * {"error": CODE, "field"?: F, "detail": TEXT} and 400 (the query, the
 * field named), 401 (no token, not Bearer, a token that does not verify,
 * with WWW-Authenticate: Bearer and error="invalid_token" as RFC 6750
 * says), 403 (the token's scope does not hold the prefix), 404 (no
 * instance has the prefix, or another path), 405 (not GET), 503 (none of
 * its instances is active).
 *
 * libmicrohttpd runs without a thread of its own (external polling, its
 * epoll set): its epoll descriptor is one event on the agent's loop, its
 * timeout a timer, so every request is answered on the loop that owns
 * the route table. No lock, no snapshot of the table, and a request sees
 * every change applied before it. The price: a slow request would hold
 * the loop, and none is (the token is checked with a public key, the
 * choice is O(instances of the prefix)).
 */
#include <arpa/inet.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <microhttpd.h>

#include "log.h"
#include "mg.h"
#include "tokens.h"

/* The caps: a header block (the token is at most 2 KiB), the query. */
#define MG_HTTP_MEMORY		(16 * 1024)
#define MG_HTTP_TIMEOUT_S	10
#define MG_QUERY_ARGS_MAX	4

struct mg_http {
	struct mg_role *r;
	struct MHD_Daemon *d;
	char *cert, *key;		/* PEM of mg.https, or NULL */
	struct event *io_ev, *tm_ev;
	uint64_t runs;
	/* refused by libmicrohttpd itself (431, 414, a broken request) */
	uint64_t errors;
};

/* --- answers ---------------------------------------------------------- */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status,
			     struct json_object *body, const char *www_auth)
{
	const char *text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(strlen(text), (void *)text,
					       MHD_RESPMEM_MUST_COPY);
	json_object_put(body);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				"application/json");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (www_auth)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					www_auth);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET");
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static const unsigned int status_of[MG_OUTCOMES] = {
	[MG_OK] = MHD_HTTP_OK, [MG_BAD_REQUEST] = MHD_HTTP_BAD_REQUEST,
	[MG_UNAUTHORIZED] = MHD_HTTP_UNAUTHORIZED,
	[MG_FORBIDDEN] = MHD_HTTP_FORBIDDEN, [MG_NOT_FOUND] = MHD_HTTP_NOT_FOUND,
	[MG_METHOD] = MHD_HTTP_METHOD_NOT_ALLOWED,
	[MG_UNAVAILABLE] = MHD_HTTP_SERVICE_UNAVAILABLE,
};

static void client_text(struct MHD_Connection *c, char *buf, size_t len)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;
	char a[INET6_ADDRSTRLEN] = "?";

	if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, a, sizeof(a));
	else if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, a, sizeof(a));
	snprintf(buf, len, "%s", a);
}

/* A refusal: counted, logged (rate-limited), answered. */
static enum MHD_Result refuse(struct mg_http *h, struct MHD_Connection *c,
			      enum mg_outcome o, enum mg_reason why,
			      const char *field, const char *detail,
			      const char *www_auth)
{
	struct json_object *b = json_object_new_object();
	char client[INET6_ADDRSTRLEN], line[400];

	client_text(c, client, sizeof(client));
	snprintf(line, sizeof(line), "%s%s%s", field ? field : "",
		 field ? ": " : "", detail);
	mg_count(h->r, o, why, client, line);
	json_object_object_add(b, "error", json_object_new_string(mg_reason_names[why]));
	if (field)
		json_object_object_add(b, "field", json_object_new_string(field));
	json_object_object_add(b, "detail", json_object_new_string(detail));
	return reply(c, status_of[o], b, www_auth);
}

/* --- the request ---------------------------------------------------------- */

struct query {
	const char *prefix;
	unsigned int nargs, nprefix;
	const char *unknown;
};

static enum MHD_Result query_arg(void *cls, enum MHD_ValueKind kind,
				 const char *key, const char *value)
{
	struct query *q = cls;

	(void)kind;
	q->nargs++;
	if (!strcmp(key, "prefix")) {
		q->nprefix++;
		q->prefix = value ? value : "";
	} else if (!q->unknown) {
		q->unknown = key;
	}
	return q->nargs > MG_QUERY_ARGS_MAX ? MHD_NO : MHD_YES;
}

/* RFC 6750's header for a 401 of @error ("" for none: no token at all). */
static void bearer(char *buf, size_t len, const char *error, const char *desc)
{
	if (!*error)
		snprintf(buf, len, "Bearer realm=\"dmsc\"");
	else
		snprintf(buf, len, "Bearer realm=\"dmsc\", error=\"%s\", error_description=\"%s\"",
			 error, desc);
}

/* By how the reason starts: the token's own text comes later (sr_token.c). */
static enum mg_reason token_reason(const char *err)
{
	if (!strncmp(err, "expired", 7) || !strncmp(err, "not yet valid", 13))
		return MG_R_TOKEN_EXPIRED;
	if (!strcmp(err, "bad signature") || !strncmp(err, "signature:", 10) ||
	    !strncmp(err, "header: kid:", 12))
		return MG_R_TOKEN_SIGNATURE;
	if (!strncmp(err, "revoked", 7))
		return MG_R_TOKEN_REVOKED;
	return MG_R_TOKEN_INVALID;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_len, void **state)
{
	struct mg_http *h = cls;
	struct query q = { 0 };
	struct token_claims cl;
	struct msg_instance inst;
	struct json_object *b;
	struct in6_addr addr;
	unsigned int len;
	const char *auth;
	char err[256], hdr[400], detail[400];
	int rc;

	(void)version;
	(void)upload;
	/*
	 * Not GET: refused at once, the connection closed (its body is not
	 * read). A GET is answered at the second call, once its request is
	 * whole: answered at the first, libmicrohttpd would take it for a
	 * body left unread and close the connection, costing the client a
	 * new one per request.
	 */
	if (strcmp(method, "GET"))
		return refuse(h, c, MG_METHOD, MG_R_METHOD, NULL,
			      "only GET /v1/resolve?prefix=ADDR/LEN", NULL);
	if (!*state) {
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);

		/* a GET has no body: refused now rather than read to its end */
		if ((cl && strcmp(cl, "0")) ||
		    MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						MHD_HTTP_HEADER_TRANSFER_ENCODING))
			return refuse(h, c, MG_BAD_REQUEST, MG_R_QUERY, "body",
				      "a GET has none", NULL);
		*state = h;
		return MHD_YES;
	}
	if (*upload_len)
		return MHD_NO;	/* a body after all: the connection is closed */
	if (strcmp(url, "/v1/resolve"))
		return refuse(h, c, MG_NOT_FOUND, MG_R_PATH, NULL,
			      "the entry is GET /v1/resolve?prefix=ADDR/LEN", NULL);
	/* the query first: a 400 needs no token, and says what is wrong */
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, query_arg, &q);
	if (q.nargs > MG_QUERY_ARGS_MAX)
		return refuse(h, c, MG_BAD_REQUEST, MG_R_QUERY, "query",
			      "too many arguments", NULL);
	if (q.unknown) {
		snprintf(detail, sizeof(detail), "unknown argument (only prefix)");
		return refuse(h, c, MG_BAD_REQUEST, MG_R_QUERY, "query", detail, NULL);
	}
	if (!q.nprefix)
		return refuse(h, c, MG_BAD_REQUEST, MG_R_QUERY, "prefix",
			      "missing (?prefix=ADDR/LEN)", NULL);
	if (q.nprefix > 1)
		return refuse(h, c, MG_BAD_REQUEST, MG_R_QUERY, "prefix",
			      "given more than once", NULL);
	if (strlen(q.prefix) >= MSG_PREFIX_MAX || !mg_prefix_parse(q.prefix, &addr, &len))
		return refuse(h, c, MG_BAD_REQUEST, MG_R_QUERY, "prefix",
			      "not an IPv6 prefix ADDR/LEN", NULL);
	auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					   MHD_HTTP_HEADER_AUTHORIZATION);
	if (!auth) {
		bearer(hdr, sizeof(hdr), "", "");
		return refuse(h, c, MG_UNAUTHORIZED, MG_R_TOKEN_MISSING,
			      "Authorization", "missing (Bearer TOKEN of the AAM)", hdr);
	}
	if (strncasecmp(auth, "Bearer ", 7) || !auth[7]) {
		bearer(hdr, sizeof(hdr), "invalid_request", "not Bearer TOKEN");
		return refuse(h, c, MG_UNAUTHORIZED, MG_R_TOKEN_SCHEME,
			      "Authorization", "not Bearer TOKEN", hdr);
	}
	auth += 7;
	if (agent_token_check(h->r->a, auth, strlen(auth), &cl, err, sizeof(err))) {
		enum mg_reason why = token_reason(err);

		bearer(hdr, sizeof(hdr), "invalid_token",
		       why == MG_R_TOKEN_EXPIRED ? "expired" :
		       why == MG_R_TOKEN_SIGNATURE ? "not signed by the AAM" :
		       why == MG_R_TOKEN_REVOKED ? "revoked" : "invalid");
		return refuse(h, c, MG_UNAUTHORIZED, why, "token", err, hdr);
	}
	/*
	 * The AAM writes the asking SR's node into the token: one asked for
	 * on another node is not for this gateway (mg.token_nodes).
	 */
	if (fnmatch(h->r->a->cfg.mg.token_nodes, cl.node, 0)) {
		snprintf(detail, sizeof(detail), "the token of %s is for node %s, not one this gateway takes",
			 cl.sub, cl.node);
		bearer(hdr, sizeof(hdr), "invalid_token", "not for this gateway");
		return refuse(h, c, MG_UNAUTHORIZED, MG_R_TOKEN_NODE, "token", detail, hdr);
	}
	if (!token_scope_allows(cl.scope, q.prefix)) {
		snprintf(detail, sizeof(detail), "the token of %s has scope %s, which does not hold %s",
			 cl.sub, cl.scope, q.prefix);
		bearer(hdr, sizeof(hdr), "insufficient_scope", "scope");
		return refuse(h, c, MG_FORBIDDEN, MG_R_SCOPE, "scope", detail, hdr);
	}
	rc = mg_resolve(h->r, &addr, len, &inst);
	if (rc == MG_R_NO_SERVICE) {
		snprintf(detail, sizeof(detail), "no instance serves %s", q.prefix);
		return refuse(h, c, MG_NOT_FOUND, MG_R_NO_SERVICE, "prefix", detail, NULL);
	}
	if (rc) {
		snprintf(detail, sizeof(detail), "no instance of %s is active", q.prefix);
		return refuse(h, c, MG_UNAVAILABLE, MG_R_NO_ACTIVE, "prefix", detail, NULL);
	}
	mg_count(h->r, MG_OK, 0, NULL, NULL);
	b = json_object_new_object();
	json_object_object_add(b, "id", json_object_new_string(inst.id));
	json_object_object_add(b, "node", json_object_new_string(inst.node));
	json_object_object_add(b, "sid", json_object_new_string(inst.sid));
	json_object_object_add(b, "prefix", json_object_new_string(inst.prefix));
	json_object_object_add(b, "rtype", json_object_new_string(inst.rtype));
	json_object_object_add(b, "capability", json_object_new_uint64(inst.capability));
	return reply(c, MHD_HTTP_OK, b, NULL);
}

/*
 * libmicrohttpd's own refusals (a header block above the memory cap: 431;
 * a request line too long: 414; a malformed request) reach no handler:
 * its log is their count, and lines within mg.log_per_s.
 */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct mg_http *h = cls;
	char line[300];
	size_t n;

	h->errors++;
	if (!mg_log_allowed(h->r))
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	agent_log("mg: http: %s", line);
}

/* --- on the loop -------------------------------------------------------- */

/* Run what is ready, then wait for the next descriptor event or timeout. */
static void run(struct mg_http *h)
{
	MHD_UNSIGNED_LONG_LONG ms;

	MHD_run(h->d);
	h->runs++;
	if (MHD_get_timeout(h->d, &ms) == MHD_YES) {
		struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000 * 1000) };

		evtimer_add(h->tm_ev, &tv);
	} else {
		evtimer_del(h->tm_ev);
	}
}

static void on_io(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	run(arg);
}

/* A PEM file into memory, for libmicrohttpd's HTTPS_MEM_* options. */
static char *read_pem(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && n < (1L << 20) &&
	    !fseek(f, 0, SEEK_SET) && (buf = calloc(1, (size_t)n + 1)) &&
	    fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

struct mg_http *mg_http_start(struct mg_role *r)
{
	const struct mg_config *cfg = &r->a->cfg.mg;
	const union MHD_DaemonInfo *di;
	struct sockaddr_storage sa;
	struct mg_http *h;
	unsigned int flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	struct MHD_OptionItem tls[4] = { { MHD_OPTION_END, 0, NULL } };
	socklen_t salen;
	uint16_t port;

	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->r = r;
	if (cfg->https_cert[0]) {
		/*
		 * The bearer token crosses here: without TLS anyone on the
		 * path can replay it for its lifetime. libmicrohttpd's TLS is
		 * GnuTLS's; TLS 1.2 and 1.3 only.
		 */
		h->cert = read_pem(cfg->https_cert);
		h->key = read_pem(cfg->https_key);
		if (!h->cert || !h->key) {
			agent_log("mg.https: cannot read %s: %m",
				  h->cert ? cfg->https_key : cfg->https_cert);
			goto fail;
		}
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			agent_log("mg.https: this libmicrohttpd has no TLS");
			goto fail;
		}
		flags |= MHD_USE_TLS;
		tls[0] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, h->cert };
		tls[1] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, h->key };
		tls[2] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0,
			(void *)"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2" };
	} else {
		agent_log("mg: no mg.https: the entry is plain HTTP, its tokens in the clear (keep it on a trusted network)");
	}
	config_addr_parse(cfg->listen, &sa, &salen);
	if (sa.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* the address is MHD_OPTION_SOCK_ADDR's; the port only for its log */
	port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port :
						((struct sockaddr_in *)&sa)->sin_port);
	h->d = MHD_start_daemon(flags, port, NULL, NULL, answer, h,
				/* first, or its own logger says a few things */
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)cfg->connections,
				/* one client cannot take them all (0: no limit) */
				MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				(unsigned int)cfg->connections_per_ip,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MG_HTTP_MEMORY,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)MG_HTTP_TIMEOUT_S,
				/* mg.https's, or nothing */
				MHD_OPTION_ARRAY, tls,
				MHD_OPTION_END);
	if (!h->d) {
		agent_log("mg.listen: cannot serve HTTP%s on %s (%m)%s", h->cert ? "S" : "",
			  cfg->listen, h->cert ? "; is mg.https's key the certificate's?" : "");
		goto fail;
	}
	di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
	if (!di) {
		agent_log("mg: libmicrohttpd has no epoll descriptor");
		goto fail;
	}
	h->io_ev = event_new(r->a->base, di->epoll_fd, EV_READ | EV_PERSIST, on_io, h);
	h->tm_ev = evtimer_new(r->a->base, on_io, h);
	if (!h->io_ev || !h->tm_ev || event_add(h->io_ev, NULL))
		goto fail;
	agent_log("mg: serving http%s://%s/v1/resolve", h->cert ? "s" : "", cfg->listen);
	run(h);
	return h;
fail:
	mg_http_stop(h);
	return NULL;
}

void mg_http_stop(struct mg_http *h)
{
	if (!h)
		return;
	if (h->io_ev)
		event_free(h->io_ev);
	if (h->tm_ev)
		event_free(h->tm_ev);
	if (h->d)
		MHD_stop_daemon(h->d);
	if (h->key)	/* a private key: not left in freed memory */
		explicit_bzero(h->key, strlen(h->key));
	free(h->key);
	free(h->cert);
	free(h);
}

struct json_object *mg_http_show(struct mg_http *h)
{
	struct json_object *o = json_object_new_object();
	const union MHD_DaemonInfo *di =
		MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);

	json_object_object_add(o, "connections",
			       json_object_new_uint64(di ? di->num_connections : 0));
	json_object_object_add(o, "loop_runs", json_object_new_uint64(h->runs));
	json_object_object_add(o, "errors", json_object_new_uint64(h->errors));
	return o;
}
