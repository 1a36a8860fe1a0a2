// SPDX-License-Identifier: GPL-2.0
/*
 * Service access authentication (type 3) as it runs: a controller agent
 * with the srd and aam roles and two sr agents (n1, n2), processes on
 * loopback with dmsc-pki's certificates and AAM key pair (aam-key),
 * asked through their control sockets and the dmsc CLI.
 *
 *   ctl (srd, aam: grants mi-* -> 2001:db8:100::/48, gw -> *)
 *    |  mutual TLS
 *   n1, n2 (sr, tokens: the AAM's public key, skew 0)
 *
 * A token asked through n1 is granted and lets n1 allow a prefix inside
 * its scope; a subject without a grant, and a scope beyond the grant,
 * are denied and counted by reason at the AAM; at n1 a forged token
 * (a signature character changed, or another key), an expired one, one
 * for a prefix outside its scope, one for another node (n1's at n2) and
 * a revoked one are each refused and counted by reason; a revocation
 * reaches n1 within a second, and survives a restart of the AAM. A
 * revoked list an SR sends the AAM, and type 3 from a controller whose
 * certificate has no aam role (to n3), are refused and counted.
 *
 * Then (shared_revocations(), skipped without etcd) two controllers on
 * one three-member etcd share their revocations (aam.revoked_prefix).
 *
 * The process helpers are test_roles.c's, copied small rather than
 * shared, so that the two files change independently.
 *
 *   test_aam AGENT DMSC-PKI DMSC
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <poll.h>

#include <json-c/json.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include "msg.h"
#include "msg_auth.h"
#include "sr_token.h"
#include "tls.h"
#include "token.h"
#include "../../tests/ktap.h"
#include "agent_proc.h"
#include "../srd/etcd.h"
#include "../srd/tests/etcd_cluster.h"

static char dir[] = "/tmp/dmsc-aam.XXXXXX";
static const char *pki_bin, *dmsc_bin;
static int port;
static pid_t pid_ctl, pid_n1, pid_n2;

#define TLS(n) "\"tls\": { \"ca\": \"%s/ca/ca.crt\", \"cert\": \"%s/ca/" n ".crt\"," \
	" \"key\": \"%s/ca/" n ".key\" }"

static void config_ctl(const char *more)
{
	char t[2048];

	snprintf(t, sizeof(t),
		 "{ \"node\": \"ctl\", \"roles\": [\"srd\", \"aam\"], \"control\": \"%s/ctl.sock\",\n"
		 "  " TLS("ctl") ",\n"
		 "  \"srd\": { \"listen\": \"127.0.0.1:%d\", \"store\": { \"sqlite\": \"%s/srd.db\" } },\n"
		 "  \"aam\": { \"key\": \"%s/aam.key\", \"kid\": \"aam1\", \"lifetime_s\": 600,\n"
		 "           \"revoked\": \"%s/aam.revoked\",\n"
		 "           \"grants\": [ { \"sub\": \"mi-*\", \"scope\": \"2001:db8:100::/48\" },\n"
		 "                       { \"sub\": \"gw\", \"scope\": \"*\" }%s ] } }\n",
		 dir, dir, dir, dir, port, dir, dir, dir, more);
	write_config("ctl", "%s", t);
}

static void config_sr_at(const char *node, const char *srd, int at)
{
	char t[2048], tls[512];

	snprintf(tls, sizeof(tls), "\"tls\": { \"ca\": \"%s/ca/ca.crt\", \"cert\": \"%s/ca/%s.crt\","
		 " \"key\": \"%s/ca/%s.key\" }", dir, dir, node, dir, node);
	snprintf(t, sizeof(t),
		 "{ \"node\": \"%s\", \"roles\": [\"sr\"], \"control\": \"%s/%s.sock\",\n"
		 "  %s,\n"
		 "  \"sr\": { \"srd\": [ { \"node\": \"%s\", \"address\": \"127.0.0.1:%d\" } ],\n"
		 "          \"kernel\": false },\n"
		 "  \"tokens\": { \"aam_key\": \"%s/aam.pub\", \"kid\": \"aam1\", \"skew_s\": 0 } }\n",
		 node, dir, node, tls, srd, at, dir);
	write_config(node, "%s", t);
}

static void config_sr(const char *node)
{
	config_sr_at(node, "ctl", port);
}

static const char *str_of(struct json_object *o, const char *a, const char *b)
{
	struct json_object *v = path_get(o, a, b);

	return v ? json_object_get_string(v) : "";
}

/* A counter of @node's show aam: @part.@key, or @part.@key.@sub. */
static uint64_t counter(const char *node, const char *part, const char *key,
			const char *sub)
{
	struct json_object *r = ask_raw(node, "{\"show\":\"aam\"}");
	struct json_object *d = path_get(path_get(r, "data", part), key, NULL);
	uint64_t n;

	if (sub)
		d = path_get(d, sub, NULL);
	n = d ? json_object_get_uint64(d) : UINT64_MAX;
	json_object_put(r);
	return n;
}

static uint64_t refused(const char *node, const char *reason)
{
	struct json_object *r = ask_raw(node, "{\"show\":\"aam\"}");
	uint64_t n = json_object_get_uint64(path_get(path_get(path_get(r, "data", "sr"),
			"access", NULL), "refused_by_reason", reason));

	json_object_put(r);
	return n;
}

/* A token for @sub and @scope asked through @node: 0 and @tok, or -1 and @err. */
static int token_of(const char *node, const char *sub, const char *scope,
		    int lifetime, char *tok, size_t size, char *err, size_t errlen)
{
	char req[512];
	struct json_object *r;
	int ret = -1;

	snprintf(req, sizeof(req), "{\"token\":{\"sub\":\"%s\",\"scope\":\"%s\",\"lifetime_s\":%d}}",
		 sub, scope, lifetime);
	r = ask_raw(node, req);
	if (r && json_object_get_boolean(path_get(r, "ok", NULL))) {
		snprintf(tok, size, "%s", str_of(path_get(r, "data", NULL), "token", NULL));
		ret = 0;
	} else {
		snprintf(err, errlen, "%s", r ? str_of(r, "error", NULL) : "(no answer)");
	}
	json_object_put(r);
	return ret;
}

/* @node's verdict on @tok for @prefix: 1 allowed, 0 refused (@reason), -1 error. */
static int access_of(const char *node, const char *tok, const char *prefix,
		     char *reason, size_t size)
{
	struct json_object *req = json_object_new_object(), *a = json_object_new_object(), *r;
	int ret = -1;

	json_object_object_add(a, "token", json_object_new_string(tok));
	json_object_object_add(a, "prefix", json_object_new_string(prefix));
	json_object_object_add(req, "access", a);
	r = ask_raw(node, json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(req);
	if (r && json_object_get_boolean(path_get(r, "ok", NULL))) {
		ret = json_object_get_boolean(path_get(path_get(r, "data", NULL), "allowed", NULL));
		snprintf(reason, size, "%s", str_of(path_get(r, "data", NULL), "reason", NULL));
	} else {
		snprintf(reason, size, "%s", r ? str_of(r, "error", NULL) : "(no answer)");
	}
	json_object_put(r);
	return ret;
}

static EVP_PKEY *load_key(const char *file)
{
	char p[256];
	EVP_PKEY *k;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	f = fopen(p, "r");
	if (!f)
		return NULL;
	k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	return k;
}

/* A token signed here with @key: claims of n1's, the times given. */
static char *sign_here(EVP_PKEY *key, int64_t iat, int64_t exp)
{
	struct token_claims c = { .iss = "ctl", .sub = "mi-a1", .node = "n1",
				  .scope = "2001:db8:100::/48", .iat = iat, .exp = exp };
	char err[256], *t = NULL;

	if (token_sign(key, "aam1", &c, &t, err, sizeof(err)))
		printf("# sign: %s\n", err);
	return t;
}

/* --- type 3 the agents must refuse ------------------------------------- */

static SSL_CTX *ctx_of(const char *name, int server)
{
	char cert[300], key[300], ca[300], err[256];
	struct tls_conf c = { cert, key, ca, NULL };
	struct peer_id self;
	SSL_CTX *x;

	snprintf(cert, sizeof(cert), "%s/ca/%s.crt", dir, name);
	snprintf(key, sizeof(key), "%s/ca/%s.key", dir, name);
	snprintf(ca, sizeof(ca), "%s/ca/ca.crt", dir);
	x = tls_ctx_new(&c, server, &self, err, sizeof(err));
	if (!x)
		printf("# %s\n", err);
	return x;
}

/* A type 3 frame from @node: a revoked list of one, or a token for re 1. */
static size_t frame_auth(const char *node, enum auth_op op, char *out, size_t size)
{
	struct auth_revoked rv = { "00112233445566778899aabbccddeeff",
				   (int64_t)time(NULL) + 600 };
	struct msg_auth a = { .op = op, .re = 1, .token = "a.b.c",
			      .revoked = &rv, .nrevoked = 1 };
	struct msg m = { .type = &msg_auth_type, .seq = 1, .body = &a };
	char err[256] = "too long", *f;
	size_t len;

	snprintf(m.node, sizeof(m.node), "%s", node);
	if (msg_encode(&m, &f, &len, err, sizeof(err)) || len > size) {
		printf("# encode: %s\n", err);
		return 0;
	}
	memcpy(out, f, len);
	free(f);
	return len;
}

/* Over @ssl: @len bytes, then what comes back for @ms (or the end). */
static void talk(SSL *ssl, int fd, const char *data, size_t len, int ms)
{
	struct timeval tv = { 0, 100000 };
	int64_t t = mono_ms() + ms;
	char buf[4096];

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (len)
		SSL_write(ssl, data, (int)len);
	while (mono_ms() < t)
		if (SSL_read(ssl, buf, sizeof(buf)) <= 0 &&
		    SSL_get_error(ssl, -1) != SSL_ERROR_WANT_READ &&
		    errno != EAGAIN)
			break;
	ERR_clear_error();
}

/* The AAM is sent a revoked list by an SR (n2's certificate). */
static void sr_to_aam(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	SSL_CTX *ctx = ctx_of("n2", 0);
	char f[1024];
	size_t len = frame_auth("n2", AUTH_REVOKED, f, sizeof(f));
	SSL *ssl;
	int fd;

	if (!ctx || !len)
		return;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ssl = SSL_new(ctx);
		SSL_set_fd(ssl, fd);
		if (SSL_connect(ssl) == 1)
			talk(ssl, fd, f, len, 300);
		SSL_free(ssl);
	}
	close(fd);
	SSL_CTX_free(ctx);
}

/*
 * 150 token requests at once on a connection of n2's certificate that
 * reads its answers: the AAM answers a burst of 100 (and 50 a second
 * after), drops the rest unanswered and counts them. The number of
 * answers read back is returned.
 */
static int request_flood(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	SSL_CTX *ctx = ctx_of("n2", 0);
	size_t cap = 150 * 512, len = 0;
	char *all = malloc(cap), buf[16384], err[256];
	int fd, answers = 0, bytes = 0;
	SSL *ssl;

	for (int i = 0; all && i < 150; i++) {
		struct msg_auth a = { .op = AUTH_REQUEST, .sub = "mi-flood",
				      .scope = "2001:db8:100::/48", .lifetime_s = 60 };
		struct msg m = { .type = &msg_auth_type, .seq = (uint64_t)i + 1, .body = &a };
		char *f;
		size_t n;

		snprintf(m.node, sizeof(m.node), "n2");
		if (msg_encode(&m, &f, &n, err, sizeof(err)) || len + n > cap) {
			printf("# encode: %s\n", err);
			free(all);
			all = NULL;
			break;
		}
		memcpy(all + len, f, n);
		len += n;
		free(f);
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (ctx && all && !connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		struct timeval tv = { 0, 100000 };
		int64_t t;

		ssl = SSL_new(ctx);
		SSL_set_fd(ssl, fd);
		if (SSL_connect(ssl) == 1 && SSL_write(ssl, all, (int)len) == (int)len) {
			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
			/* each answer carries one "re" (its request's seq) */
			for (t = mono_ms() + 1000; mono_ms() < t;) {
				int n = SSL_read(ssl, buf, sizeof(buf) - 1);

				if (n <= 0)
					continue;
				buf[n] = '\0';
				bytes += n;
				/* frames start with a binary length: no strstr() */
				for (int k = 0; k + 4 <= n; k++)
					answers += !memcmp(buf + k, "\"re\"", 4);
			}
		}
		ERR_clear_error();
		SSL_free(ssl);
	}
	close(fd);
	free(all);
	SSL_CTX_free(ctx);
	printf("# the flood's connection read %d bytes\n", bytes);
	return answers;
}

/*
 * A controller whose certificate says srd and mg, not aam (fmg), sends
 * n3 a revoked list and a token: the policy table lets mg send type 3,
 * the SR takes answers and lists from an aam only.
 */
static int fake_controller(int lfd, int ms)
{
	SSL_CTX *ctx = ctx_of("fmg", 1);
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };
	char f[2048];
	size_t len = 0;
	SSL *ssl;
	int fd, ok = 0;

	if (!ctx)
		return 0;
	if (poll(&pfd, 1, 20000) == 1 && (fd = accept(lfd, NULL, NULL)) >= 0) {
		ssl = SSL_new(ctx);
		SSL_set_fd(ssl, fd);
		if (SSL_accept(ssl) == 1) {
			len = frame_auth("fmg", AUTH_REVOKED, f, sizeof(f));
			len += frame_auth("fmg", AUTH_TOKEN, f + len, sizeof(f) - len);
			talk(ssl, fd, f, len, ms);
			ok = 1;
		} else {
			printf("# fake controller: handshake failed\n");
		}
		SSL_free(ssl);
		close(fd);
	}
	SSL_CTX_free(ctx);
	return ok;
}

/*
 * The child's part while the fake controller holds n3: once n3 is up, a
 * client that asks for a token and hangs up, and one that waits, whose
 * answer must be the timeout's. 0 if so.
 */
static int token_asker(void)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	const char req[] = "{\"token\":{\"sub\":\"mi-a1\",\"scope\":\"*\"}}\n";
	char tok[4096], err[512];
	int64_t t0;
	int fd;

	if (!WAIT(20000, ({
		struct json_object *r = ask_raw("n3", "{\"show\":\"peers\"}");
		struct json_object *a = path_get(path_get(r, "data", "sr"), "srd", NULL);
		int up = a && json_object_array_length(a) == 1 &&
			 json_object_get_boolean(path_get(json_object_array_get_idx(a, 0),
							  "up", NULL));

		json_object_put(r);
		up; })))
		return 1;
	snprintf(un.sun_path, sizeof(un.sun_path), "%s/n3.sock", dir);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (connect(fd, (struct sockaddr *)&un, sizeof(un)) ||
	    write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		return 2;
	close(fd);
	t0 = mono_ms();
	if (!token_of("n3", "mi-a1", "*", 60, tok, sizeof(tok), err, sizeof(err)))
		return 3;
	printf("# n3, no AAM: \"%s\" after %lld ms\n", err, (long long)(mono_ms() - t0));
	fflush(stdout);
	return strstr(err, "no answer from the AAM within 5000 ms") &&
	       mono_ms() - t0 >= SR_TOKEN_TIMEOUT_MS - 100 ? 0 : 4;
}

static uint64_t rejected(const char *node, const char *reason)
{
	struct json_object *r = ask_raw(node, "{\"show\":\"rejected\"}");
	uint64_t n = json_object_get_uint64(path_get(path_get(r, "data", "by_reason"),
						     reason, NULL));

	json_object_put(r);
	return n;
}

static void dump_logs(void)
{
	sh("for f in %s/*.log; do echo \"# == $f\"; tail -n 12 $f | sed 's/^/# /'; done", dir);
}

static int asan_clean(void)
{
	return sh("! grep -l 'ERROR: \\(Address\\|Leak\\)Sanitizer\\|runtime error' %s/*.log", dir) == 0;
}

/* --- revocations shared by two controllers on one etcd ------------------ */

/*
 * Controllers cta and ctb (srd+aam, each its own aam.revoked, one etcd), an
 * SR at each (s1 at cta, s2 at ctb): a revocation at ca reaches s2 through
 * etcd; one made while etcd is stopped (SIGSTOP: connections hang, as
 * with a member cut off) reaches it once etcd runs again; an entry past
 * its exp + 300 s leaves etcd and both lists and is not written back; a
 * value under the prefix that is not a revocation is counted once and
 * skipped; a cb restarted without its file has the list back from etcd.
 */
#define SHARED_CASES	8
#define SHARED_PREFIX	"/dmsc/aam/revoked/"

static int port_ca, port_cb;
static pid_t pid_ca, pid_cb, pid_s1, pid_s2;

static void config_shared_ctl(const char *node, int p)
{
	char t[2048];

	snprintf(t, sizeof(t),
		 "{ \"node\": \"%s\", \"roles\": [\"srd\", \"aam\"], \"control\": \"%s/%s.sock\",\n"
		 "  \"tls\": { \"ca\": \"%s/ca/ca.crt\", \"cert\": \"%s/ca/%s.crt\", \"key\": \"%s/ca/%s.key\" },\n"
		 "  \"srd\": { \"listen\": \"127.0.0.1:%d\", \"store\": { \"etcd\": \"%s\" } },\n"
		 "  \"aam\": { \"key\": \"%s/aam.key\", \"kid\": \"aam1\", \"lifetime_s\": 600,\n"
		 "           \"revoked\": \"%s/%s.revoked\", \"revoked_prefix\": \"" SHARED_PREFIX "\",\n"
		 "           \"grants\": [ { \"sub\": \"mi-*\", \"scope\": \"2001:db8:100::/48\" } ] } }\n",
		 node, dir, node, dir, dir, node, dir, node, p, cluster_endpoints, dir, dir, node);
	write_config(node, t);
}

/* @node's AAM holds @jti in its revoked list. */
static int aam_holds(const char *node, const char *jti)
{
	struct json_object *r = ask_raw(node, "{\"show\":\"aam\"}");
	struct json_object *l = path_get(path_get(r, "data", "aam"), "revoked", NULL);
	int found = 0;

	for (size_t i = 0; l && i < json_object_array_length(l); i++)
		found |= !strcmp(str_of(json_object_array_get_idx(l, i), "jti", NULL), jti);
	json_object_put(r);
	return found;
}

/* A counter of @node's show aam at least @n (an agent not up has none). */
static int at_least(const char *node, const char *part, const char *key, uint64_t n)
{
	uint64_t x = counter(node, part, key, NULL);

	return x != UINT64_MAX && x >= n;
}

/* @key of @node's show aam, as text ("" if none). */
static const char *aam_str(const char *node, const char *key)
{
	static char out[256];
	struct json_object *r = ask_raw(node, "{\"show\":\"aam\"}");

	snprintf(out, sizeof(out), "%s", str_of(path_get(r, "data", "aam"), key, NULL));
	json_object_put(r);
	return out;
}

/* etcd, as another writer: put @value at @key on a lease of @ttl s (0: none). */
static int et_put(const char *key, const char *value, int ttl)
{
	char err[256];
	struct etcd *e = etcd_open(cluster_endpoints, err, sizeof(err));
	struct json_object *q = json_object_new_object(), *resp;
	int ok = e != NULL;

	if (ok && ttl) {
		struct json_object *g = json_object_new_object();

		json_object_object_add(g, "TTL", json_object_new_int(ttl));
		ok = !etcd_call(e, "/v3/lease/grant", g, &resp, err, sizeof(err));
		json_object_put(g);
		if (ok) {
			json_object_object_add(q, "lease", json_object_new_int64(etcd_int(resp, "ID")));
			json_object_put(resp);
		}
	}
	json_object_object_add(q, "key", etcd_b64(key, strlen(key)));
	json_object_object_add(q, "value", etcd_b64(value, strlen(value)));
	ok = ok && !etcd_call(e, "/v3/kv/put", q, &resp, err, sizeof(err));
	if (ok)
		json_object_put(resp);
	else
		printf("# etcd put %s: %s\n", key, err);
	json_object_put(q);
	etcd_close(e);
	return ok;
}

/* @key in etcd: 1 and its lease's remaining TTL in *@ttl, 0 absent, -1 error. */
static int et_get(const char *key, int64_t *ttl)
{
	char err[256];
	struct etcd *e = etcd_open(cluster_endpoints, err, sizeof(err));
	struct json_object *q = json_object_new_object(), *resp, *kvs, *kv;
	int ret = -1;

	json_object_object_add(q, "key", etcd_b64(key, strlen(key)));
	if (e && !etcd_call(e, "/v3/kv/range", q, &resp, err, sizeof(err))) {
		kv = json_object_object_get_ex(resp, "kvs", &kvs) ?
		     json_object_array_get_idx(kvs, 0) : NULL;
		ret = kv ? 1 : 0;
		if (kv && ttl) {
			struct json_object *t = json_object_new_object(), *r2;

			json_object_object_add(t, "ID", json_object_new_int64(etcd_int(kv, "lease")));
			*ttl = !etcd_call(e, "/v3/lease/timetolive", t, &r2, err, sizeof(err)) ?
			       etcd_int(r2, "TTL") : -1;
			if (*ttl != -1)
				json_object_put(r2);
			json_object_put(t);
		}
		json_object_put(resp);
	}
	json_object_put(q);
	etcd_close(e);
	return ret;
}

static void etcd_pause(int sig)
{
	for (int k = 0; k < 3; k++)
		kill(cluster_member[k], sig);
}

/* A token asked through @node, and its jti (from the AAM's log line). */
static int shared_token(const char *node, char *tok, size_t size, char *jti)
{
	char err[256];
	struct token_claims c;
	struct token_verifier v = { .kid = "aam1", .skew = 0 };
	FILE *f;
	char p[256];
	int ok;

	snprintf(p, sizeof(p), "%s/aam.pub", dir);
	f = fopen(p, "r");
	v.key = f ? PEM_read_PUBKEY(f, NULL, NULL, NULL) : NULL;
	if (f)
		fclose(f);
	ok = v.key && !token_of(node, "mi-s", "2001:db8:100::/48", 600, tok, size, err,
				sizeof(err)) &&
	     !token_verify(&v, tok, strlen(tok), (int64_t)time(NULL), &c, err, sizeof(err));
	if (ok)
		strcpy(jti, c.jti);
	else
		printf("# token through %s: %s\n", node, err);
	EVP_PKEY_free(v.key);
	return ok;
}

static void shared_skip(int from, const char *why)
{
	for (int k = from; k < SHARED_CASES; k++)
		printf("ok %d shared revocation case %d # SKIP %s\n", ++ktap_n, k + 1, why);
}

static void shared_revocations(void)
{
	char t1[4096], t2[4096], j1[64] = "", j2[64] = "", j3[64], why[256], err[256] = "";
	char key[256], val[512], buf[512];
	int64_t t0, ttl = 0;
	uint64_t bad_a, bad_b;
	int ok;

	if (sh("command -v etcd >/dev/null")) {
		shared_skip(0, "no etcd (Debian's etcd-server)");
		return;
	}
	ok = !sh("(set -e; p=%s; d=%s; $p -d $d/ca node cta --roles srd,aam;"
		 " $p -d $d/ca node ctb --roles srd,aam;"
		 " $p -d $d/ca node s1 --roles sr; $p -d $d/ca node s2 --roles sr) >>%s/pki.log 2>&1",
		 pki_bin, dir, dir);
	if (!ok)
		snprintf(err, sizeof(err), "dmsc-pki failed");
	else if (cluster_up(err, sizeof(err)))
		ok = 0;
	port_ca = free_port();
	do
		port_cb = free_port();
	while (port_cb == port_ca);
	config_shared_ctl("cta", port_ca);
	config_shared_ctl("ctb", port_cb);
	config_sr_at("s1", "cta", port_ca);
	config_sr_at("s2", "ctb", port_cb);
	pid_ca = spawn("cta");
	pid_cb = spawn("ctb");
	snprintf(buf, sizeof(buf), "%s/ctb.sock", dir);
	WAIT(15000, access(buf, F_OK) == 0);
	pid_s1 = spawn("s1");
	pid_s2 = spawn("s2");

	/* 1: both AAMs read the prefix, their SRs have the (empty) list */
	ok = ok && WAIT(20000, at_least("s1", "sr", "revoked_pushes", 1) &&
			at_least("s2", "sr", "revoked_pushes", 1) &&
			at_least("cta", "aam", "revoked_etcd_reads", 1) &&
			at_least("ctb", "aam", "revoked_etcd_reads", 1)) &&
	     !strcmp(aam_str("cta", "revoked_prefix"), SHARED_PREFIX);
	ktap_check(ok, "shared: two controllers (srd+aam) on one etcd, an SR at each; both AAMs read " SHARED_PREFIX);
	if (!ok) {
		printf("# %s; pushes %llu %llu reads %llu %llu prefix %s\n", err,
		       (unsigned long long)counter("s1", "sr", "revoked_pushes", NULL),
		       (unsigned long long)counter("s2", "sr", "revoked_pushes", NULL),
		       (unsigned long long)counter("cta", "aam", "revoked_etcd_reads", NULL),
		       (unsigned long long)counter("ctb", "aam", "revoked_etcd_reads", NULL),
		       aam_str("cta", "revoked_prefix"));
		shared_skip(1, "no controllers on etcd");
		goto out;
	}

	/* 2: a token of s2 (issued by ctb) revoked at cta: s2 refuses it */
	ok = shared_token("s2", t1, sizeof(t1), j1) &&
	     access_of("s2", t1, "2001:db8:100:5::/64", why, sizeof(why)) == 1;
	t0 = mono_ms();
	ok = ok && !sh("%s agent socket %s/cta.sock aam revoke %s > %s/revoke.out", dmsc_bin, dir,
		       j1, dir) &&
	     WAIT(5000, access_of("s2", t1, "2001:db8:100:5::/64", why, sizeof(why)) == 0) &&
	     !strcmp(why, "revoked");
	printf("# revocation at cta to refusal at s2 (ctb's SR, through etcd): %lld ms\n",
	       (long long)(mono_ms() - t0));
	ok = ok && !sh("grep -q '^revoked %s; etcd: pending$' %s/revoke.out", j1, dir) &&
	     WAIT(2000, counter("cta", "aam", "revoked_shared_out", NULL) == 1) &&
	     counter("ctb", "aam", "revoked_shared_in", NULL) == 1 &&
	     counter("ctb", "aam", "revokes", NULL) == 0 &&
	     !sh("grep -q %s %s/ctb.revoked", j1, dir);
	ktap_check(ok, "shared: a revocation at cta (CLI: etcd: pending) reaches s2, ctb's SR, which refuses the token; in ctb's file; counted out at cta, in at ctb");

	/* 3: its key: cta's value, on a lease to exp + 300 (cta did not issue it: now + 3600) */
	snprintf(key, sizeof(key), SHARED_PREFIX "%s", j1);
	ok = et_get(key, &ttl) == 1 && ttl > 3600 + 300 - 30 && ttl <= 3600 + 300;
	printf("# %s: lease TTL %lld s\n", key, (long long)ttl);
	ktap_check(ok, "shared: the jti's key in etcd, on a lease that ends at its exp + 300 s");

	/* 4: etcd stopped: a revocation at cta is kept, pending; s2 learns it once etcd runs */
	ok = shared_token("s2", t2, sizeof(t2), j2);
	etcd_pause(SIGSTOP);
	t0 = mono_ms();
	ok = ok && !sh("%s agent socket %s/cta.sock aam revoke %s > %s/revoke.out", dmsc_bin, dir,
		       j2, dir);
	printf("# revoke at cta with etcd stopped answered in %lld ms\n",
	       (long long)(mono_ms() - t0));
	ok = ok && aam_holds("cta", j2) && !sh("grep -q %s %s/cta.revoked", j2, dir) &&
	     WAIT(4000, counter("cta", "aam", "revoked_etcd_errors", NULL) >= 1) &&
	     counter("cta", "aam", "revoked_etcd_pending", NULL) == 1 &&
	     !strcmp(aam_str("cta", "revoked_etcd"), "pending") &&
	     access_of("s2", t2, "2001:db8:100:5::/64", why, sizeof(why)) == 1;
	etcd_pause(SIGCONT);
	t0 = mono_ms();
	ok = ok && WAIT(20000, access_of("s2", t2, "2001:db8:100:5::/64", why, sizeof(why)) == 0) &&
	     !strcmp(why, "revoked");
	printf("# etcd running again to refusal at s2: %lld ms\n", (long long)(mono_ms() - t0));
	ok = ok && WAIT(5000, counter("cta", "aam", "revoked_etcd_pending", NULL) == 0) &&
	     counter("cta", "aam", "revoked_shared_out", NULL) == 2 &&
	     counter("ctb", "aam", "revoked_shared_in", NULL) == 2;
	ktap_check(ok, "shared: a revocation made while etcd is stopped: kept and pending at cta, written when etcd runs again, then refused at s2");

	/* 5: an entry past its time: etcd drops it, both AAMs too, none writes it back */
	strcpy(j3, "0123456789abcdef0123456789abcdef");
	snprintf(key, sizeof(key), SHARED_PREFIX "%s", j3);
	snprintf(val, sizeof(val), "{\"jti\":\"%s\",\"exp\":%lld,\"by\":\"elsewhere\"}", j3,
		 (long long)time(NULL) - 300 + 4);
	ok = et_put(key, val, 4) &&
	     WAIT(3000, aam_holds("cta", j3) && aam_holds("ctb", j3));
	t0 = mono_ms();
	ok = ok && WAIT(10000, et_get(key, NULL) == 0 && !aam_holds("cta", j3) &&
			!aam_holds("ctb", j3));
	printf("# an entry of 4 s left: gone from etcd and both AAMs in %lld ms\n",
	       (long long)(mono_ms() - t0));
	sleep(2);
	ok = ok && et_get(key, NULL) == 0 && aam_holds("cta", j1) && aam_holds("ctb", j2);
	ktap_check(ok, "shared: an entry at its exp + 300 s leaves etcd and both lists, and is not written back");

	/* 6: values that are not revocations: counted once each, skipped */
	bad_a = counter("cta", "aam", "revoked_bad_values", NULL);
	bad_b = counter("ctb", "aam", "revoked_bad_values", NULL);
	ok = et_put(SHARED_PREFIX "zzz", "not json {", 0) &&
	     et_put(SHARED_PREFIX "00000000000000000000000000000001",
		    "{\"jti\":\"00000000000000000000000000000002\",\"exp\":9999999999,\"by\":\"x\"}", 0) &&
	     WAIT(3000, counter("cta", "aam", "revoked_bad_values", NULL) == bad_a + 2 &&
		  counter("ctb", "aam", "revoked_bad_values", NULL) == bad_b + 2) &&
	     !aam_holds("ctb", "00000000000000000000000000000001") &&
	     !aam_holds("ctb", "00000000000000000000000000000002");
	/* another change under the prefix makes both read it all again */
	ok = ok && et_put(SHARED_PREFIX "zzz", "still not json", 0) &&
	     WAIT(3000, counter("ctb", "aam", "revoked_bad_values", NULL) == bad_b + 3) &&
	     counter("cta", "aam", "revoked_bad_values", NULL) == bad_a + 3;
	sleep(1);
	ok = ok && counter("ctb", "aam", "revoked_bad_values", NULL) == bad_b + 3 &&
	     access_of("s2", t1, "2001:db8:100:5::/64", why, sizeof(why)) == 0;
	ktap_check(ok, "shared: values under the prefix that are no revocation (not JSON, a jti not the key's) counted once each and skipped");

	/* 7: ctb restarted without its file: the list comes back from etcd */
	stop_clean(&pid_cb);
	snprintf(buf, sizeof(buf), "%s/ctb.revoked", dir);
	unlink(buf);
	pid_cb = spawn("ctb");
	ok = WAIT(20000, aam_holds("ctb", j1) && aam_holds("ctb", j2)) &&
	     WAIT(20000, access_of("s2", t2, "2001:db8:100:5::/64", why, sizeof(why)) == 0) &&
	     !sh("grep -q %s %s/ctb.revoked", j2, dir);
	ktap_check(ok, "shared: ctb restarted without its aam.revoked: both jtis back from etcd, kept, refused at s2");

	/* 8: the configuration's checks */
	ok = 1;
	{
		static const char *const bad[][2] = {
			{ "\"revoked_prefix\": \"\"", "aam.revoked_prefix: must be 1..255 characters" },
			{ "\"revoked_prefix\": \"/dmsc/aam/revoked\"", "aam.revoked_prefix: \"/dmsc/aam/revoked\" must end in" },
			{ "\"revoked_prefix\": \"/dmsc/\"", "aam.revoked_prefix: \"/dmsc/\" overlaps" },
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			char t[1024];

			snprintf(t, sizeof(t),
				 "{ \"node\": \"cx\", \"roles\": [\"srd\", \"aam\"],\n"
				 "  \"tls\": { \"ca\": \"%s/ca/ca.crt\", \"cert\": \"%s/ca/ca.crt\", \"key\": \"%s/ca/ca.key\" },\n"
				 "  \"srd\": { \"listen\": \"127.0.0.1:1\", \"store\": { \"etcd\": \"http://127.0.0.1:1\" } },\n"
				 "  \"aam\": { \"key\": \"%s/aam.key\", %s, \"grants\": [] } }\n",
				 dir, dir, dir, dir, bad[i][0]);
			write_config("cx", "%s", t);
			ok = ok && sh("%s -c %s/cx.json --check > %s/cx.out 2>&1", agent_bin, dir, dir) != 0 &&
			     !sh("grep -qF '%s' %s/cx.out", bad[i][1], dir);
			if (!ok)
				sh("sed 's/^/# /' %s/cx.out", dir);
		}
	}
	ktap_check(ok, "shared: aam.revoked_prefix empty, without a trailing '/', or over /dmsc/: refused, naming the field");
out:
	stop_clean(&pid_s1);
	stop_clean(&pid_s2);
	stop_clean(&pid_ca);
	stop_clean(&pid_cb);
	cluster_down();
}

int main(int argc, char **argv)
{
	char tok[4096], tok2[4096], bad[4096], err[512], why[512], jti[64], buf[1024];
	EVP_PKEY *aam_key = NULL, *rogue = NULL;
	uint64_t n0, n1;
	int ok, ok2 = 0, i;
	int64_t t0, now;
	char *t;

	if (argc != 4) {
		fprintf(stderr, "usage: test_aam AGENT DMSC-PKI DMSC\n");
		return 2;
	}
	agent_bin = argv[1];
	pki_bin = argv[2];
	dmsc_bin = argv[3];
	signal(SIGPIPE, SIG_IGN);
	ktap_plan(getenv("TEST_AAM_SHARED_ONLY") ? 1 + SHARED_CASES + 1 : 25 + SHARED_CASES);
	agents_dir = dir;
	if (!mkdtemp(dir))
		return 1;
	ok = !sh("(set -e; p=%s; d=%s;"
		 " $p -d $d/ca init; $p -d $d/ca node ctl --roles srd,aam;"
		 " for n in n1 n2 n3; do $p -d $d/ca node $n --roles sr; done;"
		 " $p -d $d/ca node fmg --roles srd,mg;"
		 " $p -d $d/ca aam-key aam; cp $d/ca/aam.key $d/ca/aam.pub $d/;"
		 " openssl genpkey -algorithm ed25519 -out $d/rogue.key) >%s/pki.log 2>&1",
		 pki_bin, dir, dir);
	aam_key = load_key("aam.key");
	rogue = load_key("rogue.key");
	ktap_check(ok && aam_key && rogue,
		   "dmsc-pki made the certificates and the AAM's Ed25519 key pair (aam-key)");
	if (!ok || !aam_key || !rogue)
		return ktap_finish();
	/* TEST_AAM_SHARED_ONLY=1: the etcd cases alone, to iterate on them */
	if (getenv("TEST_AAM_SHARED_ONLY")) {
		shared_revocations();
		goto done;
	}
	port = free_port();
	config_ctl("");
	config_sr("n1");
	config_sr("n2");
	pid_ctl = spawn("ctl");
	snprintf(buf, sizeof(buf), "%s/ctl.sock", dir);
	WAIT(15000, access(buf, F_OK) == 0);
	pid_n1 = spawn("n1");
	pid_n2 = spawn("n2");

	/* 2: connected, and each given the AAM's (empty) revoked list */
	ok = WAIT(20000, counter("n1", "sr", "revoked_pushes", NULL) == 1 &&
		  counter("n2", "sr", "revoked_pushes", NULL) == 1) &&
	     counter("ctl", "aam", "revoked_pushes", NULL) == 2;
	ktap_check(ok, "both SRs connected and got the AAM's revoked list once");

	/* 3: a token through n1's control socket, granted */
	ok = !token_of("n1", "mi-a1", "2001:db8:100::/48", 600, tok, sizeof(tok), err, sizeof(err)) &&
	     counter("ctl", "aam", "issued", NULL) == 1 &&
	     counter("n1", "sr", "token_requests", "granted") == 1;
	if (!ok)
		printf("# %s\n", err);
	ktap_check(ok, "a token for mi-a1, 2001:db8:100::/48, asked through n1: granted");

	/* 4: its claims: this AAM, n1's node, the scope asked */
	{
		struct token_verifier v = { .key = NULL, .skew = 0 };
		struct token_claims c;
		EVP_PKEY *pub = NULL;
		FILE *f;

		snprintf(buf, sizeof(buf), "%s/aam.pub", dir);
		f = fopen(buf, "r");
		if (f) {
			pub = PEM_read_PUBKEY(f, NULL, NULL, NULL);
			fclose(f);
		}
		v.key = pub;
		v.kid = "aam1";
		ok = pub && !token_verify(&v, tok, strlen(tok), (int64_t)time(NULL), &c, err,
					  sizeof(err)) &&
		     !strcmp(c.iss, "ctl") && !strcmp(c.node, "n1") && !strcmp(c.sub, "mi-a1") &&
		     !strcmp(c.scope, "2001:db8:100::/48") && c.exp - c.iat == 600;
		strcpy(jti, ok ? c.jti : "");
		EVP_PKEY_free(pub);
	}
	ktap_check(ok, "the token names iss ctl, node n1, sub mi-a1, the scope, 600 s");

	/* 5: allowed for a prefix inside its scope */
	ok = access_of("n1", tok, "2001:db8:100:5::/64", why, sizeof(why)) == 1 &&
	     counter("n1", "sr", "access", "allowed") == 1;
	ktap_check(ok, "n1 allows it for 2001:db8:100:5::/64, inside its scope");

	/* 6: no grant for the subject: denied, counted, no token */
	n0 = counter("ctl", "aam", "issued", NULL);
	ok = token_of("n1", "x-1", "2001:db8:100::/48", 60, tok2, sizeof(tok2), err, sizeof(err)) &&
	     strstr(err, "denied by the AAM: no-grant: no grant for x-1") &&
	     counter("ctl", "aam", "denied_by_reason", "no-grant") == 1 &&
	     counter("n1", "sr", "token_requests", "denied") == 1 &&
	     counter("ctl", "aam", "issued", NULL) == n0;
	if (!ok)
		printf("# %s\n", err);
	ktap_check(ok, "a subject without a grant: denied (no-grant), counted, nothing issued");

	/* 7: a scope beyond the grant */
	ok = token_of("n1", "mi-a1", "2001:db8::/32", 60, tok2, sizeof(tok2), err, sizeof(err)) &&
	     strstr(err, "denied by the AAM: scope:") &&
	     counter("ctl", "aam", "denied_by_reason", "scope") == 1 &&
	     counter("ctl", "aam", "issued", NULL) == n0;
	ktap_check(ok, "mi-a1 asking 2001:db8::/32, beyond its grant's /48: denied (scope), counted");

	/* 8: the CLI: a token on stdout, -j, then access with exit 0 */
	ok = !sh("%s -j agent socket %s/n1.sock token request sub gw scope '*' lifetime 60 > %s/tok.json",
		 dmsc_bin, dir, dir) &&
	     !sh("%s agent socket %s/n1.sock token request sub mi-b scope 2001:db8:100:1::/64 > %s/tokb.txt",
		 dmsc_bin, dir, dir);
	{
		struct json_object *j;

		snprintf(buf, sizeof(buf), "%s/tok.json", dir);
		j = json_object_from_file(buf);
		snprintf(tok2, sizeof(tok2), "%s", str_of(j, "token", NULL));
		ok = ok && strlen(tok2) > 100;
		json_object_put(j);
	}
	ok = ok && !sh("%s agent socket %s/n1.sock access token %s prefix fc00:9::/64 > /dev/null",
		       dmsc_bin, dir, tok2) &&
	     sh("%s agent socket %s/n1.sock access token $(cat %s/tokb.txt) prefix fc00:9::/64 2> %s/cli.err",
		dmsc_bin, dir, dir, dir) == 256 &&
	     !sh("grep -q 'access refused: scope: fc00:9::/64 is not inside' %s/cli.err", dir) &&
	     sh("%s agent socket %s/n1.sock access token %s prefix fc00:9::/64x 2> %s/cli.err",
		dmsc_bin, dir, tok2, dir) == 256 &&
	     !sh("grep -q 'access.prefix: \"fc00:9::/64x\" is not an IPv6 ADDR/LEN' %s/cli.err", dir);
	ktap_check(ok, "CLI: token request (text and -j); access: exit 0 allowed, 1 refused or a bad prefix");

	/* 9: forged: a signature character changed, and another key's */
	strcpy(bad, tok);
	i = (int)strlen(bad) - 10;
	bad[i] = bad[i] == 'A' ? 'B' : 'A';
	n0 = refused("n1", "signature");
	t = sign_here(rogue, (int64_t)time(NULL), (int64_t)time(NULL) + 60);
	ok = access_of("n1", bad, "2001:db8:100:5::/64", why, sizeof(why)) == 0 &&
	     !strcmp(why, "signature") && t &&
	     access_of("n1", t, "2001:db8:100:5::/64", why, sizeof(why)) == 0 &&
	     !strcmp(why, "signature") && refused("n1", "signature") == n0 + 2;
	free(t);
	ktap_check(ok, "forged tokens (a flipped signature, a rogue key) refused: signature, counted 2");

	/* 10: expired: one signed with the AAM's key an hour ago, one of 1 s */
	now = (int64_t)time(NULL);
	t = sign_here(aam_key, now - 3600, now - 3000);
	ok = t && access_of("n1", t, "2001:db8:100:5::/64", why, sizeof(why)) == 0 &&
	     !strcmp(why, "expired");
	free(t);
	ok = ok && !token_of("n1", "mi-a1", "2001:db8:100::/48", 1, tok2, sizeof(tok2), err,
			     sizeof(err)) &&
	     access_of("n1", tok2, "2001:db8:100:5::/64", why, sizeof(why)) == 1;
	ok = ok && WAIT(3000, access_of("n1", tok2, "2001:db8:100:5::/64", why, sizeof(why)) == 0) &&
	     !strcmp(why, "expired") && refused("n1", "expired") >= 2;
	ktap_check(ok, "expired tokens refused (one of the past, one of 1 s after it ran out), counted");

	/* 11: a prefix outside the scope */
	n0 = refused("n1", "scope");
	ok = access_of("n1", tok, "2001:db8:200::/64", why, sizeof(why)) == 0 &&
	     !strcmp(why, "scope") &&
	     access_of("n1", tok, "2001:db8::/32", why, sizeof(why)) == 0 &&
	     refused("n1", "scope") == n0 + 2;
	ktap_check(ok, "a prefix outside the token's scope, or wider than it, refused: scope");

	/* 12: n1's token at n2 */
	ok = access_of("n2", tok, "2001:db8:100:5::/64", why, sizeof(why)) == 0 &&
	     !strcmp(why, "node") && refused("n2", "node") == 1;
	ktap_check(ok, "n1's token at n2: refused (node), counted at n2");

	/* 13: revoked through the CLI: n1 refuses within a second */
	t0 = mono_ms();
	ok = jti[0] && !sh("%s agent socket %s/ctl.sock aam revoke %s", dmsc_bin, dir, jti) &&
	     WAIT(1000, access_of("n1", tok, "2001:db8:100:5::/64", why, sizeof(why)) == 0) &&
	     !strcmp(why, "revoked");
	printf("# revocation to refusal at n1: %lld ms\n", (long long)(mono_ms() - t0));
	ok = ok && refused("n1", "revoked") == 1 && counter("ctl", "aam", "revokes", NULL) == 1 &&
	     counter("n2", "sr", "revoked_pushes", NULL) == 2;
	ktap_check(ok, "aam revoke JTI: n1 refuses the token within a second (revoked); n2 got the list");

	/* 14: bad revocations refused, the list unchanged */
	ok = sh("%s agent socket %s/ctl.sock aam revoke xyz 2>/dev/null", dmsc_bin, dir) != 0 &&
	     !sh("%s agent socket %s/ctl.sock aam revoke %s", dmsc_bin, dir, jti) &&
	     counter("ctl", "aam", "revokes", NULL) == 1 &&
	     counter("n1", "sr", "revoked_pushes", NULL) == 2;
	ktap_check(ok, "a jti that is not one refused; the same jti again changes nothing");

	/* 15: requests a client gets wrong, at once */
	{
		struct json_object *r = ask_raw("n1", "{\"token\":{\"sub\":\"a b\",\"scope\":\"*\"}}");
		struct json_object *r2 = ask_raw("n1", "{\"token\":{\"sub\":\"a\",\"scope\":\"*\",\"ttl\":1}}");
		struct json_object *r3 = ask_raw("n1", "{\"access\":{\"prefix\":\"::/0\"}}");

		ok = r && strstr(str_of(r, "error", NULL), "token: token.sub: not printable ASCII without spaces") &&
		     r2 && strstr(str_of(r2, "error", NULL), "token.ttl: unknown field") &&
		     r3 && strstr(str_of(r3, "error", NULL), "access.token: required");
		json_object_put(r);
		json_object_put(r2);
		json_object_put(r3);
	}
	ktap_check(ok, "bad token and access requests refused at once, naming the field");

	/* 16: the AAM restarted: its revoked list read back and pushed again */
	stop_clean(&pid_ctl);
	n1 = counter("n1", "sr", "revoked_pushes", NULL);
	pid_ctl = spawn("ctl");
	ok = WAIT(20000, counter("n1", "sr", "revoked_pushes", NULL) > n1) &&
	     access_of("n1", tok, "2001:db8:100:5::/64", why, sizeof(why)) == 0 &&
	     !strcmp(why, "revoked");
	{
		struct json_object *r = ask_raw("ctl", "{\"show\":\"aam\"}");
		struct json_object *l = path_get(path_get(r, "data", "aam"), "revoked", NULL);

		ok = ok && l && json_object_array_length(l) == 1 &&
		     !strcmp(str_of(json_object_array_get_idx(l, 0), "jti", NULL), jti);
		json_object_put(r);
	}
	ktap_check(ok, "after an AAM restart the revocation holds (aam.revoked) and is pushed again");

	/* 17: n1 restarted: the list comes on connect; a new token works */
	stop_clean(&pid_n1);
	pid_n1 = spawn("n1");
	ok = WAIT(20000, counter("n1", "sr", "revoked_pushes", NULL) == 1) &&
	     access_of("n1", tok, "2001:db8:100:5::/64", why, sizeof(why)) == 0 &&
	     !strcmp(why, "revoked") &&
	     !token_of("n1", "mi-a1", "2001:db8:100:7::/64", 60, tok2, sizeof(tok2), err, sizeof(err)) &&
	     access_of("n1", tok2, "2001:db8:100:7::/64", why, sizeof(why)) == 1;
	ktap_check(ok, "a restarted SR gets the revoked list on connect; a fresh token is allowed");

	/* 18: an SR's certificate sending the AAM a revoked list */
	n0 = rejected("ctl", "type");
	sr_to_aam();
	ok = WAIT(2000, rejected("ctl", "type") == n0 + 1) &&
	     counter("ctl", "aam", "revokes", NULL) == 0 &&
	     counter("n1", "sr", "revoked_pushes", NULL) == 1;
	ktap_check(ok, "a revoked list sent to the AAM by an SR: refused (type), counted, not pushed");

	/* 19: a controller without the aam role feeding an SR type 3 */
	{
		struct sockaddr_in sa = { .sin_family = AF_INET,
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t l = sizeof(sa);
		int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1, status = 1;
		pid_t pid_n3, kid;

		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		ok = !bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) && !listen(lfd, 4) &&
		     !getsockname(lfd, (struct sockaddr *)&sa, &l);
		config_sr_at("n3", "fmg", ntohs(sa.sin_port));
		pid_n3 = spawn("n3");
		kid = fork();
		if (!kid)
			_exit(token_asker());
		ok = ok && fake_controller(lfd, SR_TOKEN_TIMEOUT_MS + 1500) &&
		     WAIT(2000, rejected("n3", "role") == 2) &&
		     counter("n3", "sr", "revoked_pushes", NULL) == 0 &&
		     counter("n3", "tokens", "revoked", NULL) == 0 &&
		     counter("n3", "sr", "token_requests", "late") == 0;
		waitpid(kid, &status, 0);
		ok2 = WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
		      counter("n3", "sr", "token_requests", "timeouts") == 2 &&
		      counter("n3", "sr", "token_requests", "granted") == 0;
		close(lfd);
		stop_clean(&pid_n3);
	}
	ktap_check(ok, "type 3 from a controller without the aam role: refused at the SR (role), not kept");
	ktap_check(ok2, "no answer from the AAM: the token request fails after 5 s, saying so; a client gone meanwhile too");

	/* 21: a grant added by SIGHUP */
	config_ctl(", { \"sub\": \"x-*\", \"scope\": \"fc00:5::/32\" }");
	n0 = counter("ctl", "aam", "issued", NULL);
	kill(pid_ctl, SIGHUP);
	ok = WAIT(3000, counter("ctl", "aam", "grants", NULL) == 3) &&
	     !token_of("n1", "x-1", "fc00:5:1::/48", 60, tok2, sizeof(tok2), err, sizeof(err)) &&
	     counter("ctl", "aam", "issued", NULL) == n0 + 1 &&
	     counter("n1", "sr", "revoked_pushes", NULL) == 1;
	ktap_check(ok, "SIGHUP: a grant added to the file is the AAM's at once, the SRs stay connected");

	/* 22: the show aam text of the CLI */
	ok = !sh("%s agent socket %s/ctl.sock show aam | grep -q '^aam kid aam1 grants 3 requests 2 issued 2 denied 0 revoked 1'",
		 dmsc_bin, dir) &&
	     !sh("%s agent socket %s/n2.sock show aam | grep -q '^  refused_node 1'", dmsc_bin, dir);
	ktap_check(ok, "dmsc agent show aam: the AAM's counts and an SR's refusals");

	/* 23: a grant for the SRs of some nodes only */
	config_ctl(", { \"sub\": \"x-*\", \"scope\": \"fc00:5::/32\" },"
		   " { \"sub\": \"y-*\", \"scope\": \"fc00:6::/32\", \"nodes\": \"n2\" }");
	kill(pid_ctl, SIGHUP);
	ok = WAIT(3000, counter("ctl", "aam", "grants", NULL) == 4) &&
	     token_of("n1", "y-1", "fc00:6::/48", 60, tok2, sizeof(tok2), err, sizeof(err)) &&
	     strstr(err, "denied by the AAM: node: no grant of y-1 for node n1") &&
	     counter("ctl", "aam", "denied_by_reason", "node") == 1 &&
	     !token_of("n2", "y-1", "fc00:6::/48", 60, tok2, sizeof(tok2), err, sizeof(err));
	if (!ok)
		printf("# %s\n", err);
	ktap_check(ok, "a grant with nodes n2: y-1 asked through n1 denied (node), through n2 granted");

	/* 24: 150 requests at once from one peer: a burst of 100 answered */
	{
		uint64_t i0 = counter("ctl", "aam", "issued", NULL);
		int answers = request_flood();
		uint64_t issued = counter("ctl", "aam", "issued", NULL) - i0,
			 limited = counter("ctl", "aam", "rate_limited", NULL);

		printf("# 150 requests at once: %d answers read, %llu issued, %llu dropped\n",
		       answers, (unsigned long long)issued, (unsigned long long)limited);
		ok = issued >= 100 && issued <= 110 && limited == 150 - issued &&
		     answers == (int)issued;
		ktap_check(ok, "150 token requests at once from one peer: 100 to 110 answered (a burst of 100, 50/s), the rest dropped and counted");
	}

	stop_clean(&pid_n1);
	stop_clean(&pid_n2);
	stop_clean(&pid_ctl);
	shared_revocations();
done:
	ktap_check(asan_clean(), "no sanitizer report in the agents' logs (stopped by SIGTERM)");
	if (ktap_failed)
		dump_logs();
	else
		sh("rm -rf %s", dir);
	EVP_PKEY_free(aam_key);
	EVP_PKEY_free(rogue);
	return ktap_finish();
}
