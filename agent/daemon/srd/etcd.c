// SPDX-License-Identifier: GPL-2.0
/*
 * The etcd v3 JSON-gateway client of etcd.h, on one libcurl easy handle
 * (connections to the member in use are kept alive between calls).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/evp.h>

#include "etcd.h"

/* Answers above this are refused: a registry listing of 100,000 instances
 * is about 40 MB.
 */
#define ETCD_MAX_ANSWER	(64u << 20)

struct etcd {
	CURL *h;
	char *ep[ETCD_MAX_ENDPOINTS];
	int n, cur;
	long total_ms, connect_ms;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

struct buf {
	char *p;
	size_t len, cap;
	int too_big;
};

static size_t collect(char *data, size_t size, size_t nmemb, void *arg)
{
	struct buf *b = arg;
	size_t n = size * nmemb;

	if (b->len + n + 1 > ETCD_MAX_ANSWER) {
		b->too_big = 1;
		return 0;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *p = realloc(b->p, cap);

		if (!p)
			return 0;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

struct etcd *etcd_open(const char *endpoints, char *err, size_t errlen)
{
	struct etcd *e;
	char *copy, *tok, *save = NULL;

	pthread_once(&curl_once, curl_init);
	e = calloc(1, sizeof(*e));
	copy = strdup(endpoints);
	if (!e || !copy) {
		free(e);
		free(copy);
		snprintf(err, errlen, "etcd: out of memory");
		return NULL;
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (e->n == ETCD_MAX_ENDPOINTS) {
			snprintf(err, errlen, "etcd: endpoints: more than %d",
				 ETCD_MAX_ENDPOINTS);
			goto fail;
		}
		if (strncmp(tok, "http://", 7) && strncmp(tok, "https://", 8)) {
			snprintf(err, errlen, "etcd: endpoints: \"%s\" is not an http:// or https:// URL",
				 tok);
			goto fail;
		}
		if (strlen(tok) > 200) {
			snprintf(err, errlen, "etcd: endpoints: \"%.40s...\" is longer than 200 bytes",
				 tok);
			goto fail;
		}
		e->ep[e->n] = strdup(tok);
		if (!e->ep[e->n++]) {
			snprintf(err, errlen, "etcd: out of memory");
			goto fail;
		}
	}
	free(copy);
	copy = NULL;
	if (!e->n) {
		snprintf(err, errlen, "etcd: endpoints: none given");
		goto fail;
	}
	e->total_ms = 5000;
	e->connect_ms = 1000;
	e->h = curl_easy_init();
	if (!e->h) {
		snprintf(err, errlen, "etcd: curl_easy_init failed");
		goto fail;
	}
	return e;
fail:
	free(copy);
	etcd_close(e);
	return NULL;
}

void etcd_close(struct etcd *e)
{
	int i;

	if (!e)
		return;
	if (e->h)
		curl_easy_cleanup(e->h);
	for (i = 0; i < e->n; i++)
		free(e->ep[i]);
	free(e);
}

void etcd_set_timeouts(struct etcd *e, long total_ms, long connect_ms)
{
	e->total_ms = total_ms;
	e->connect_ms = connect_ms;
}

const char *etcd_endpoint(const struct etcd *e)
{
	return e->ep[e->cur];
}

/*
 * One POST, to the current member; to the next only while nothing was
 * sent (a member down or unreachable), since a sent request may have been
 * applied. After any failure the next call starts at the next member.
 */
static int post(struct etcd *e, const char *path, const char *body,
		long timeout_ms, curl_write_callback wr, void *wrarg,
		long *http, CURLcode *cc, char *err, size_t errlen)
{
	struct curl_slist *hdr = curl_slist_append(NULL,
					"Content-Type: application/json");
	/*
	 * gRPC metadata "hasleader": a member cut off from its cluster's
	 * leader ends the request (and a watch stream) instead of keeping it
	 * open and silent, so the watcher moves to another member.
	 */
	hdr = curl_slist_append(hdr, "Grpc-Metadata-hasleader: true");
	char url[512];
	long sent;
	int tries;

	for (tries = 0; tries < e->n; tries++) {
		snprintf(url, sizeof(url), "%s%s", e->ep[e->cur], path);
		curl_easy_reset(e->h);
		curl_easy_setopt(e->h, CURLOPT_URL, url);
		curl_easy_setopt(e->h, CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(e->h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(e->h, CURLOPT_WRITEFUNCTION, wr);
		curl_easy_setopt(e->h, CURLOPT_WRITEDATA, wrarg);
		curl_easy_setopt(e->h, CURLOPT_CONNECTTIMEOUT_MS, e->connect_ms);
		curl_easy_setopt(e->h, CURLOPT_TIMEOUT_MS, timeout_ms);
		curl_easy_setopt(e->h, CURLOPT_NOSIGNAL, 1L);
		*cc = curl_easy_perform(e->h);
		*http = 0;
		sent = 0;
		curl_easy_getinfo(e->h, CURLINFO_RESPONSE_CODE, http);
		curl_easy_getinfo(e->h, CURLINFO_REQUEST_SIZE, &sent);
		/* an answer, or our callback ended it: done */
		if (*cc == CURLE_OK || *cc == CURLE_WRITE_ERROR)
			break;
		e->cur = (e->cur + 1) % e->n;
		if (sent)
			break;	/* perhaps applied: not again elsewhere */
	}
	curl_slist_free_all(hdr);
	if (*cc != CURLE_OK && *cc != CURLE_WRITE_ERROR) {
		snprintf(err, errlen, "etcd: %s: %s%s", url, curl_easy_strerror(*cc),
			 tries == e->n ? " (no member reachable)" : "");
		return -1;
	}
	return 0;
}

int etcd_call(struct etcd *e, const char *path, struct json_object *req,
	      struct json_object **resp, char *err, size_t errlen)
{
	const char *body = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	struct buf b = { 0 };
	struct json_object *o;
	CURLcode cc;
	long http;

	*resp = NULL;
	if (post(e, path, body, e->total_ms, collect, &b, &http, &cc, err, errlen))
		goto fail;
	if (cc != CURLE_OK) {
		snprintf(err, errlen, "etcd %s: %s", path,
			 b.too_big ? "answer too large" : curl_easy_strerror(cc));
		goto fail;
	}
	o = b.p ? json_tokener_parse(b.p) : NULL;
	if (http != 200) {
		struct json_object *m;

		/* the gateway's error: {"error": "...", "message": "...", "code": N} */
		snprintf(err, errlen, "etcd %s: HTTP %ld: %s", path, http,
			 o && json_object_object_get_ex(o, "message", &m) ?
			 json_object_get_string(m) : "no message");
		json_object_put(o);
		goto fail;
	}
	if (!o || !json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "etcd %s: answer is not a JSON object", path);
		json_object_put(o);
		goto fail;
	}
	{
		struct json_object *ge, *m;

		/* a streamed method (keepalive) reports errors inside a 200 */
		if (json_object_object_get_ex(o, "error", &ge)) {
			snprintf(err, errlen, "etcd %s: %s", path,
				 json_object_object_get_ex(ge, "message", &m) ?
				 json_object_get_string(m) : json_object_get_string(ge));
			json_object_put(o);
			goto fail;
		}
	}
	free(b.p);
	*resp = o;
	return 0;
fail:
	free(b.p);
	return -1;
}

struct watch {
	struct buf b;
	etcd_line_fn fn;
	void *arg;
	int verdict;	/* what fn said: 0 going on, 1 done, -1 error */
	char said[200];	/* etcd's error instead of a result ("no leader") */
};

/* etcd's message in @o, {"error": {"message": ...}}, kept in @w. */
static void watch_error(struct watch *w, struct json_object *o)
{
	struct json_object *ge, *m;

	if (!o || !json_object_object_get_ex(o, "error", &ge))
		return;
	snprintf(w->said, sizeof(w->said), "%s",
		 json_object_object_get_ex(ge, "message", &m) ?
		 json_object_get_string(m) : json_object_get_string(ge));
}

/* Lines of a streamed answer, each {"result": {...}}, to the caller. */
static size_t watch_data(char *data, size_t size, size_t nmemb, void *arg)
{
	struct watch *w = arg;
	size_t n = size * nmemb;
	char *nl;

	if (collect(data, size, nmemb, &w->b) != n)
		return 0;
	while ((nl = memchr(w->b.p, '\n', w->b.len))) {
		struct json_object *o, *r;

		*nl = '\0';
		o = json_tokener_parse(w->b.p);
		memmove(w->b.p, nl + 1, w->b.len - (nl + 1 - w->b.p));
		w->b.len -= nl + 1 - w->b.p;
		w->b.p[w->b.len] = '\0';
		if (!o || !json_object_object_get_ex(o, "result", &r)) {
			watch_error(w, o);
			json_object_put(o);
			w->verdict = -1;
			return 0;
		}
		w->verdict = w->fn(r, w->arg);
		json_object_put(o);
		if (w->verdict)
			return 0;	/* ends the transfer */
	}
	return n;
}

int etcd_watch(struct etcd *e, struct json_object *req, etcd_line_fn fn,
	       void *arg, long timeout_ms, char *err, size_t errlen)
{
	const char *body = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	struct watch w = { .fn = fn, .arg = arg };
	int cur = e->cur;
	CURLcode cc;
	long http;

	if (post(e, "/v3/watch", body, timeout_ms, watch_data, &w, &http, &cc,
		 err, errlen)) {
		free(w.b.p);
		/*
		 * A stream the member answered that ran out its @timeout_ms is
		 * how a window ends, not the member's fault: say "timed out",
		 * as the caller expects, and stay with that member. (Taken as
		 * a failure, it cost the standing watcher a pause of 200 ms
		 * and a move to the next member every window.)
		 */
		if (cc == CURLE_OPERATION_TIMEDOUT && http == 200) {
			e->cur = cur;
			snprintf(err, errlen, "etcd watch: timed out");
		}
		return -1;
	}
	/*
	 * An error instead of a stream (a member without a leader, as the
	 * metadata hasleader asks it to say) comes as one object, perhaps
	 * with no line end: an HTTP error status, or a 200 with it.
	 */
	if (w.verdict == 0 && w.b.p) {
		struct json_object *o = json_tokener_parse(w.b.p);

		watch_error(&w, o);
		json_object_put(o);
	}
	free(w.b.p);
	if (w.verdict == 1)
		return 0;
	if (w.said[0]) {
		snprintf(err, errlen, "etcd watch: %s", w.said);
		return -1;
	}
	if (w.verdict == -1 || (cc == CURLE_OK && http != 200)) {
		snprintf(err, errlen, "etcd watch: %s", http != 200 ?
			 "HTTP error" : "bad answer");
		return -1;
	}
	snprintf(err, errlen, "etcd watch: %s", cc == CURLE_OPERATION_TIMEDOUT ?
		 "timed out" : curl_easy_strerror(cc));
	return -1;
}

struct json_object *etcd_b64(const void *s, size_t n)
{
	char *out = malloc(4 * ((n + 2) / 3) + 1);
	struct json_object *o;

	if (!out)
		return NULL;
	EVP_EncodeBlock((unsigned char *)out, s, n);
	o = json_object_new_string(out);
	free(out);
	return o;
}

int etcd_unb64(const char *in, char *out, size_t size)
{
	size_t n = strlen(in), pad = 0;
	unsigned char *tmp;
	int len;

	if (n % 4)
		return -1;
	if (n && in[n - 1] == '=')
		pad++;
	if (n > 1 && in[n - 2] == '=')
		pad++;
	tmp = malloc(n / 4 * 3 + 1);
	if (!tmp)
		return -1;
	len = EVP_DecodeBlock(tmp, (const unsigned char *)in, n);
	if (len < 0 || (size_t)len - pad >= size) {
		free(tmp);
		return -1;
	}
	memcpy(out, tmp, len - pad);
	out[len - pad] = '\0';
	free(tmp);
	return 0;
}

int64_t etcd_int(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return 0;	/* proto3 leaves zeros out */
	return json_object_get_int64(v);
}

struct json_object *etcd_op_put(struct json_object *key, const char *value,
				int64_t lease)
{
	struct json_object *r = json_object_new_object(), *p = json_object_new_object();

	json_object_object_add(p, "key", key);
	json_object_object_add(p, "value", etcd_b64(value, strlen(value)));
	if (lease)
		json_object_object_add(p, "lease", json_object_new_int64(lease));
	json_object_object_add(r, "request_put", p);
	return r;
}

struct json_object *etcd_compare(struct json_object *key, const char *target,
				 const char *result, const char *field,
				 struct json_object *v)
{
	struct json_object *c = json_object_new_object();

	json_object_object_add(c, "key", key);
	json_object_object_add(c, "target", json_object_new_string(target));
	json_object_object_add(c, "result", json_object_new_string(result));
	json_object_object_add(c, field, v);
	return c;
}
