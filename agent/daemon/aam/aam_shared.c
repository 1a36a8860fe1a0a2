// SPDX-License-Identifier: GPL-2.0
/*
 * The revoked jtis through etcd (aam_shared.h). Three threads touch this:
 * the loop (put, the pipe's reads, show), the worker (every etcd call but
 * the watch) and the watcher's (which only asks the worker for a read).
 * Everything shared is under one mutex; no etcd call is made holding it.
 */
#define _GNU_SOURCE	/* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aam_shared.h"
#include "etcd.h"
#include "etcd_watcher.h"
#include "json_strict.h"
#include "log.h"
#include "token.h"

/* the worker's calls: off the loop, but a stop waits for one */
#define SHARED_CALL_MS		2000
#define SHARED_CONNECT_MS	500
/* a read or write that failed is tried again after this */
#define SHARED_RETRY_MS		1000
/* and the whole prefix read again this often even when the watch is quiet */
#define SHARED_RESYNC_S		30
/*
 * A jti with less time than this to live is not written: etcd would round
 * its lease up (its shortest is about 2 s) and keep it past its time.
 */
#define SHARED_MIN_TTL_S	3
#define SHARED_KEY_MAX		512
#define SHARED_VALUE_MAX	512

struct aam_shared {
	char prefix[SHARED_KEY_MAX], end[SHARED_KEY_MAX];
	char node[64];
	char *endpoints;		/* for the watcher's own connection */
	int64_t grace_s;
	aam_shared_fn fn;
	void *arg;
	struct event *ev;
	int pipe_fd[2];			/* the worker writes, the loop reads */
	pthread_t worker;
	bool worker_up;
	struct etcd *e;			/* the worker's own */
	struct etcd_watcher *w;		/* started by the worker, after a read;
					 * set under the mutex (show reads it) */
	uint64_t last_rev;		/* worker: etcd's revision at the last read */

	_Atomic bool stop;		/* read by the worker between calls */
	pthread_mutex_t mu;		/* all below */
	pthread_cond_t cv;
	bool want_read, failed;
	struct auth_revoked *out;	/* queued writes, AUTH_REVOKED_MAX of room */
	size_t nout, ninflight;
	struct auth_revoked *res;	/* the last read, sorted by jti, for the loop */
	size_t nres;
	bool res_ready;
	uint64_t reads, written, already, errors, bad;
	/* the loop's: what it has logged, and when (a line a minute while down) */
	uint64_t logged_errors, logged_bad;
	int64_t logged_s;
	bool logged_down;
	char error[320], bad_why[320];
};

static int by_jti(const void *a, const void *b)
{
	return strcmp(((const struct auth_revoked *)a)->jti,
		      ((const struct auth_revoked *)b)->jti);
}

static bool jti_ok(const char *s)
{
	return strlen(s) == TOKEN_JTI_LEN &&
	       strspn(s, "0123456789abcdef") == TOKEN_JTI_LEN;
}

/* worker: an etcd failure, counted */
static void failed(struct aam_shared *s, const char *what, const char *err)
{
	pthread_mutex_lock(&s->mu);
	s->errors++;
	snprintf(s->error, sizeof(s->error), "%s: %s", what, err);
	pthread_mutex_unlock(&s->mu);
}

/*
 * worker: @v to etcd, on a lease of its remaining time, if no key holds
 * it yet (the first writer's "by" stays). 0 (written, there already, or
 * too close to its end to matter), -1 if etcd could not be asked.
 */
static int put_one(struct aam_shared *s, const struct auth_revoked *v)
{
	int64_t ttl = v->exp + s->grace_s - (int64_t)time(NULL), lease;
	struct json_object *req, *resp, *arr, *x;
	char key[SHARED_KEY_MAX + 64], value[SHARED_VALUE_MAX], err[256];
	bool won;

	if (ttl < SHARED_MIN_TTL_S)
		return 0;
	req = json_object_new_object();
	json_object_object_add(req, "TTL", json_object_new_int64(ttl));
	if (etcd_call(s->e, "/v3/lease/grant", req, &resp, err, sizeof(err))) {
		json_object_put(req);
		failed(s, "lease grant", err);
		return -1;
	}
	json_object_put(req);
	lease = etcd_int(resp, "ID");
	json_object_put(resp);
	if (lease <= 0) {
		failed(s, "lease grant", "etcd granted no lease");
		return -1;
	}
	snprintf(key, sizeof(key), "%s%s", s->prefix, v->jti);
	x = json_object_new_object();
	json_object_object_add(x, "jti", json_object_new_string(v->jti));
	json_object_object_add(x, "exp", json_object_new_int64(v->exp));
	json_object_object_add(x, "by", json_object_new_string(s->node));
	snprintf(value, sizeof(value), "%s",
		 json_object_to_json_string_ext(x, JSON_C_TO_STRING_PLAIN));
	json_object_put(x);

	req = json_object_new_object();
	arr = json_object_new_array();
	json_object_array_add(arr, etcd_compare(etcd_b64(key, strlen(key)), "VERSION",
						"EQUAL", "version", json_object_new_int64(0)));
	json_object_object_add(req, "compare", arr);
	arr = json_object_new_array();
	json_object_array_add(arr, etcd_op_put(etcd_b64(key, strlen(key)), value, lease));
	json_object_object_add(req, "success", arr);
	if (etcd_call(s->e, "/v3/kv/txn", req, &resp, err, sizeof(err))) {
		json_object_put(req);
		failed(s, "put", err);
		return -1;
	}
	json_object_put(req);
	won = json_object_object_get_ex(resp, "succeeded", &x) &&
	      json_object_get_boolean(x);
	json_object_put(resp);
	if (!won) {
		/* another AAM was first: our lease holds nothing */
		req = json_object_new_object();
		json_object_object_add(req, "ID", json_object_new_int64(lease));
		if (!etcd_call(s->e, "/v3/lease/revoke", req, &resp, err, sizeof(err)))
			json_object_put(resp);
		json_object_put(req);
	}
	pthread_mutex_lock(&s->mu);
	if (won)
		s->written++;
	else
		s->already++;
	pthread_mutex_unlock(&s->mu);
	return 0;
}

/*
 * worker: one key's value as a revoked jti, strictly: another writer (or a
 * hand) may have put anything under the prefix. -1 with @why.
 */
static int parse_value(struct aam_shared *s, const char *key, const char *text,
		       struct auth_revoked *v, char *why, size_t whylen)
{
	static const char *const keys[] = { "jti", "exp", "by", NULL };
	struct json_strict_rules rules = JSON_STRICT_FILE("value");
	const char *name = key + strlen(s->prefix);
	struct json_object *o;
	char by[64];
	uint64_t exp;
	int rc = -1;

	o = json_strict_parse(text, strlen(text), &rules, why, whylen);
	if (!o)
		return -1;
	if (!json_object_is_type(o, json_type_object))
		snprintf(why, whylen, "expected an object");
	else if (!msg_keys_only(o, "", keys, NULL, why, whylen) &&
		 !msg_get_string(o, "", "jti", v->jti, sizeof(v->jti), why, whylen) &&
		 !msg_get_u64(o, "", "exp", AUTH_EXP_MAX, &exp, why, whylen) &&
		 !msg_get_string(o, "", "by", by, sizeof(by), why, whylen)) {
		if (!jti_ok(v->jti))
			snprintf(why, whylen, "jti: not %d lowercase hex digits",
				 TOKEN_JTI_LEN);
		else if (strcmp(name, v->jti))
			snprintf(why, whylen, "jti: %s is not the key's", v->jti);
		/*
		 * No token lives past TOKEN_MAX_LIFETIME (and the skew): an
		 * exp beyond is no revocation's, and would be kept for ever
		 * (a key written by hand has no lease to end it).
		 */
		else if ((int64_t)exp > (int64_t)time(NULL) + TOKEN_MAX_LIFETIME + 300)
			snprintf(why, whylen, "exp: %llu is past any token's lifetime",
				 (unsigned long long)exp);
		else
			rc = 0;
		v->exp = (int64_t)exp;
	}
	json_object_put(o);
	return rc;
}

/*
 * worker: the whole prefix. The good values sorted into *@res; a bad one
 * counted once, when it is new since the last read (a value that stays
 * is not counted again at each read). 0, or -1 if etcd failed.
 */
static int read_all(struct aam_shared *s, struct auth_revoked **res, size_t *nres,
		    uint64_t *rev)
{
	struct json_object *req = json_object_new_object(), *resp, *kvs, *h;
	struct auth_revoked *r;
	char err[256], why[200], key[SHARED_KEY_MAX + 64];
	char *text = NULL;
	size_t n = 0, nkv;
	uint64_t bad = 0;

	json_object_object_add(req, "key", etcd_b64(s->prefix, strlen(s->prefix)));
	json_object_object_add(req, "range_end", etcd_b64(s->end, strlen(s->end)));
	if (etcd_call(s->e, "/v3/kv/range", req, &resp, err, sizeof(err))) {
		json_object_put(req);
		failed(s, "read", err);
		return -1;
	}
	json_object_put(req);
	*rev = json_object_object_get_ex(resp, "header", &h) ?
	       (uint64_t)etcd_int(h, "revision") : 0;
	nkv = json_object_object_get_ex(resp, "kvs", &kvs) ?
	      json_object_array_length(kvs) : 0;
	r = calloc(AUTH_REVOKED_MAX, sizeof(*r));
	text = malloc(SHARED_VALUE_MAX * 2);
	if (!r || !text) {
		free(r);
		free(text);
		json_object_put(resp);
		failed(s, "read", "out of memory");
		return -1;
	}
	if (nkv > AUTH_REVOKED_MAX)
		failed(s, "read", "more keys under the prefix than a revoked list holds: the rest left out");
	for (size_t i = 0; i < nkv && n < AUTH_REVOKED_MAX; i++) {
		struct json_object *kv = json_object_array_get_idx(kvs, i), *k, *v;
		bool is_new = (uint64_t)etcd_int(kv, "mod_revision") > s->last_rev;

		if (!json_object_object_get_ex(kv, "key", &k) ||
		    etcd_unb64(json_object_get_string(k), key, sizeof(key)))
			snprintf(key, sizeof(key), "(a key too long)");
		if (!json_object_object_get_ex(kv, "value", &v) ||
		    etcd_unb64(json_object_get_string(v), text, SHARED_VALUE_MAX * 2))
			snprintf(why, sizeof(why), "not base64, or longer than %d bytes",
				 SHARED_VALUE_MAX * 2 - 1);
		else if (!parse_value(s, key, text, &r[n], why, sizeof(why))) {
			n++;
			continue;
		}
		if (is_new) {
			bad++;
			pthread_mutex_lock(&s->mu);
			snprintf(s->bad_why, sizeof(s->bad_why), "%.100s: %s", key, why);
			pthread_mutex_unlock(&s->mu);
		}
	}
	json_object_put(resp);
	free(text);
	qsort(r, n, sizeof(*r), by_jti);
	pthread_mutex_lock(&s->mu);
	s->bad += bad;
	s->reads++;
	pthread_mutex_unlock(&s->mu);
	*res = r;
	*nres = n;
	return 0;
}

/* From the watcher's thread: a change under the prefix, read it. */
static void watch_wake(void *arg)
{
	struct aam_shared *s = arg;

	pthread_mutex_lock(&s->mu);
	s->want_read = true;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

/* worker: queue @v unless it is queued already (under the mutex) */
static void queue(struct aam_shared *s, const struct auth_revoked *v)
{
	for (size_t i = 0; i < s->nout; i++)
		if (!strcmp(s->out[i].jti, v->jti))
			return;
	if (s->nout < AUTH_REVOKED_MAX)
		s->out[s->nout++] = *v;
}

static void *worker_main(void *arg)
{
	struct aam_shared *s = arg;
	struct auth_revoked *batch = calloc(AUTH_REVOKED_MAX, sizeof(*batch));

	pthread_mutex_lock(&s->mu);
	while (!s->stop && batch) {
		struct auth_revoked *res = NULL;
		size_t n, done = 0, nres = 0;
		bool read, fail = false;
		uint64_t rev = 0;

		if (s->failed || (!s->want_read && !s->nout)) {
			struct timespec t;

			clock_gettime(CLOCK_REALTIME, &t);
			t.tv_sec += s->failed ? SHARED_RETRY_MS / 1000 : SHARED_RESYNC_S;
			if (pthread_cond_timedwait(&s->cv, &s->mu, &t) == ETIMEDOUT ||
			    s->failed)
				/*
				 * etcd back, perhaps, or restored from a snapshot
				 * (its revisions went back: the watch is silent):
				 * what it lacks is known only by a read
				 */
				s->want_read = true;
			else if (!s->want_read && !s->nout)
				continue;
		}
		if (s->stop)
			break;
		n = s->nout;
		memcpy(batch, s->out, n * sizeof(*batch));
		s->ninflight = n;
		s->nout = 0;
		read = s->want_read;
		s->want_read = false;
		pthread_mutex_unlock(&s->mu);

		for (; done < n && !fail && !s->stop; done++)
			fail = put_one(s, &batch[done]) != 0;
		if (fail)
			done--;		/* the one that failed goes again */
		/* a stop waits for the call under way, not for more */
		if (!fail && read && !s->stop)
			fail = read_all(s, &res, &nres, &rev) != 0;
		if (res && !s->w && !s->stop) {
			struct etcd_watcher *w;
			char err[256];

			/* from the read's revision: nothing between is missed */
			w = etcd_watcher_start(s->endpoints, s->prefix, s->end, "",
					       rev, watch_wake, s, err, sizeof(err));
			if (!w)
				failed(s, "watch", err);
			pthread_mutex_lock(&s->mu);
			s->w = w;
			pthread_mutex_unlock(&s->mu);
		}
		if (res)
			s->last_rev = rev;

		pthread_mutex_lock(&s->mu);
		for (size_t i = done; i < n; i++)
			queue(s, &batch[i]);
		s->ninflight = 0;
		s->failed = fail;
		if (res) {
			free(s->res);
			s->res = res;
			s->nres = nres;
			s->res_ready = true;
		}
		pthread_mutex_unlock(&s->mu);
		if (write(s->pipe_fd[1], "r", 1) < 0) {
			/* full (EAGAIN): the loop has a wake-up pending anyway */
		}
		pthread_mutex_lock(&s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	free(batch);
	return NULL;
}

/* On the loop: what the worker did; a read's result to the role. */
static void on_pipe(evutil_socket_t fd, short what, void *arg)
{
	struct aam_shared *s = arg;
	struct auth_revoked *res = NULL;
	char buf[64], error[320] = "", bad_why[320] = "";
	uint64_t errors, bad;
	size_t n = 0;
	bool down;

	(void)what;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	pthread_mutex_lock(&s->mu);
	if (s->res_ready) {
		res = s->res;
		n = s->nres;
		s->res = NULL;
		s->nres = 0;
		s->res_ready = false;
	}
	errors = s->errors;
	bad = s->bad;
	down = s->failed;
	snprintf(error, sizeof(error), "%s", s->error);
	if (bad != s->logged_bad)
		snprintf(bad_why, sizeof(bad_why), "%s", s->bad_why);
	pthread_mutex_unlock(&s->mu);
	/*
	 * The worker retries every second while etcd fails: a line when it
	 * starts failing, then one a minute, and one when it answers again.
	 */
	if (errors != s->logged_errors &&
	    (!s->logged_down || time(NULL) - s->logged_s >= 60)) {
		agent_log("aam: etcd: %s (%llu errors; revocations wait in aam.revoked)",
			  error, (unsigned long long)errors);
		s->logged_s = time(NULL);
		s->logged_down = true;
	} else if (!down && s->logged_down) {
		agent_log("aam: etcd answers again (%llu errors)", (unsigned long long)errors);
		s->logged_down = false;
	}
	if (bad != s->logged_bad)
		agent_log("aam: etcd: %llu bad values under %s, skipped; the last: %s",
			  (unsigned long long)(bad - s->logged_bad), s->prefix, bad_why);
	s->logged_errors = errors;
	s->logged_bad = bad;
	if (res)
		s->fn(s->arg, res, n);
	free(res);
}

struct aam_shared *aam_shared_start(struct event_base *base,
				    const char *endpoints, const char *prefix,
				    const char *node, int64_t grace_s,
				    aam_shared_fn fn, void *arg, char *err,
				    size_t errlen)
{
	struct aam_shared *s = calloc(1, sizeof(*s));
	size_t len = strlen(prefix);

	if (!s) {
		snprintf(err, errlen, "aam: out of memory");
		return NULL;
	}
	s->pipe_fd[0] = s->pipe_fd[1] = -1;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	/* config.c has checked it; the range end is the prefix's successor */
	if (!len || len >= sizeof(s->prefix) || prefix[len - 1] != '/') {
		snprintf(err, errlen, "aam.revoked_prefix: \"%s\" is not a key ending in '/'",
			 prefix);
		goto fail;
	}
	snprintf(s->prefix, sizeof(s->prefix), "%s", prefix);
	snprintf(s->end, sizeof(s->end), "%s", prefix);
	s->end[len - 1]++;
	snprintf(s->node, sizeof(s->node), "%s", node);
	s->grace_s = grace_s;
	s->fn = fn;
	s->arg = arg;
	s->out = calloc(AUTH_REVOKED_MAX, sizeof(*s->out));
	s->endpoints = strdup(endpoints);
	if (!s->out || !s->endpoints) {
		snprintf(err, errlen, "aam: out of memory");
		goto fail;
	}
	s->e = etcd_open(endpoints, err, errlen);
	if (!s->e)
		goto fail;
	etcd_set_timeouts(s->e, SHARED_CALL_MS, SHARED_CONNECT_MS);
	if (pipe2(s->pipe_fd, O_NONBLOCK | O_CLOEXEC)) {
		snprintf(err, errlen, "aam: pipe: %s", strerror(errno));
		goto fail;
	}
	s->ev = event_new(base, s->pipe_fd[0], EV_READ | EV_PERSIST, on_pipe, s);
	if (!s->ev || event_add(s->ev, NULL)) {
		snprintf(err, errlen, "aam: no event");
		goto fail;
	}
	/* the first read: what the other AAMs revoked, and what etcd lacks */
	s->want_read = true;
	if (pthread_create(&s->worker, NULL, worker_main, s)) {
		snprintf(err, errlen, "aam: cannot start a thread");
		goto fail;
	}
	s->worker_up = true;
	return s;
fail:
	aam_shared_stop(s);
	return NULL;
}

void aam_shared_stop(struct aam_shared *s)
{
	if (!s)
		return;
	if (s->worker_up) {
		pthread_mutex_lock(&s->mu);
		s->stop = true;
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->worker, NULL);
	}
	/* after the worker, which started it; its wake takes only the mutex */
	etcd_watcher_stop(s->w);
	if (s->ev)
		event_free(s->ev);
	if (s->pipe_fd[0] >= 0)
		close(s->pipe_fd[0]);
	if (s->pipe_fd[1] >= 0)
		close(s->pipe_fd[1]);
	etcd_close(s->e);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s->out);
	free(s->res);
	free(s->endpoints);
	free(s);
}

void aam_shared_put(struct aam_shared *s, const struct auth_revoked *v)
{
	pthread_mutex_lock(&s->mu);
	queue(s, v);
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

size_t aam_shared_pending(struct aam_shared *s)
{
	size_t n;

	pthread_mutex_lock(&s->mu);
	n = s->nout + s->ninflight;
	pthread_mutex_unlock(&s->mu);
	return n;
}

void aam_shared_show(struct aam_shared *s, struct json_object *o)
{
	pthread_mutex_lock(&s->mu);
	json_object_object_add(o, "revoked_prefix", json_object_new_string(s->prefix));
	json_object_object_add(o, "revoked_etcd",
			       json_object_new_string(s->nout + s->ninflight ? "pending" :
						      s->failed ? "unreachable" :
						      s->reads ? "ok" : "reading"));
	json_object_object_add(o, "revoked_etcd_pending",
			       json_object_new_uint64(s->nout + s->ninflight));
	json_object_object_add(o, "revoked_shared_out", json_object_new_uint64(s->written));
	json_object_object_add(o, "revoked_shared_already", json_object_new_uint64(s->already));
	json_object_object_add(o, "revoked_etcd_reads", json_object_new_uint64(s->reads));
	json_object_object_add(o, "revoked_etcd_errors", json_object_new_uint64(s->errors));
	json_object_object_add(o, "revoked_bad_values", json_object_new_uint64(s->bad));
	json_object_object_add(o, "revoked_etcd_error", json_object_new_string(s->error));
	json_object_object_add(o, "revoked_watch_errors",
			       json_object_new_uint64(s->w ? etcd_watcher_errors(s->w) : 0));
	pthread_mutex_unlock(&s->mu);
}
