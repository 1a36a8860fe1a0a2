// SPDX-License-Identifier: GPL-2.0
/*
 * The relay of smo_relay.h: the leader's set from one etcd key to this
 * SMO, read on the loop when the watcher thread says the key changed.
 *
 * The read blocks the loop like an election step (at most 1 s, a
 * millisecond or two on a healthy etcd), once per write of the leader.
 * A set is taken only if its term (the key's mod_revision) is above the
 * one held, so a read that a slower path overtook changes nothing.
 */
#define _GNU_SOURCE	/* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "etcd.h"
#include "etcd_watcher.h"
#include "json_strict.h"
#include "log.h"
#include "smo_relay.h"

/* a read on the loop, like an election step's call */
#define RELAY_CALL_MS		1000
#define RELAY_CONNECT_MS	500
/* the whole set, all nodes' (the wire's limit is per node) */
#define RELAY_POLICIES_MAX	65536

struct smo_relay {
	struct etcd *e;			/* the loop's reads */
	struct etcd_watcher *w;		/* its thread's own connection */
	int wake_fd[2];			/* the thread writes, the loop reads */
	struct event *ev;
	char key[256];
	struct smo_set set;
	smo_relay_fn changed;
	void *arg;
	bool owed;			/* the last read failed: read again */
	uint64_t reads, read_errors, refused, taken, wakes;
	int64_t taken_ms;		/* monotonic: when the set was taken */
	char error[512];
};

static int64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000ll + t.tv_nsec / 1000000;
}

static void set_free(struct smo_set *s)
{
	free(s->p);
	memset(s, 0, sizeof(*s));
}

char *smo_relay_value(const char *leader, uint64_t seat, uint64_t rev,
		      const struct policy *p, size_t n)
{
	struct json_object *o = json_object_new_object(), *a;
	char *text;

	json_object_object_add(o, "leader", json_object_new_string(leader));
	json_object_object_add(o, "seat", json_object_new_uint64(seat));
	json_object_object_add(o, "rev", json_object_new_uint64(rev));
	a = json_object_new_array();
	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, policy_json(&p[i]));
	json_object_object_add(o, "policies", a);
	text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return text;
}

/* @text as a set, strictly (the key may have been written by hand). */
static int parse(const char *text, struct smo_set *s, char *err, size_t errlen)
{
	static const char *const keys[] = {
		"leader", "seat", "rev", "policies", NULL,
	};
	struct json_strict_rules rules = JSON_STRICT_FILE("value");
	struct json_object *o, *arr;
	size_t n;
	char sub[48];
	int rc = -1;

	memset(s, 0, sizeof(*s));
	o = json_strict_parse(text, strlen(text), &rules, err, errlen);
	if (!o)
		return -1;
	if (!json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "expected an object");
		goto out;
	}
	if (msg_keys_only(o, "", keys, NULL, err, errlen) ||
	    msg_get_string(o, "", "leader", s->leader, sizeof(s->leader), err, errlen) ||
	    msg_get_u64(o, "", "seat", UINT64_MAX, &s->seat, err, errlen) ||
	    msg_get_u64(o, "", "rev", UINT64_MAX, &s->rev, err, errlen) ||
	    msg_get_array(o, "", "policies", RELAY_POLICIES_MAX, &arr, err, errlen))
		goto out;
	n = json_object_array_length(arr);
	s->p = calloc(n ? n : 1, sizeof(*s->p));
	if (!s->p) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(sub, sizeof(sub), "policies[%zu]", i);
		if (policy_from_json(json_object_array_get_idx(arr, i), sub,
				     &s->p[i], err, errlen))
			goto out;
	}
	s->n = n;
	rc = 0;
out:
	if (rc)
		set_free(s);
	json_object_put(o);
	return rc;
}

/* @text written at @term: taken if newer than what we hold. */
static void consider(struct smo_relay *rl, uint64_t term, const char *text)
{
	struct smo_set s;
	char err[160];
	bool full;

	if (term <= rl->set.term)
		return;		/* had it (our own write), or older */
	if (parse(text, &s, err, sizeof(err))) {
		rl->refused++;
		snprintf(rl->error, sizeof(rl->error), "%s at revision %llu: %s",
			 rl->key, (unsigned long long)term, err);
		agent_log("smo: relay: %s", rl->error);
		/*
		 * etcd no longer holds the set we have (a value written by
		 * hand?): relay nothing, as for a deleted key, so that the
		 * leader, finding its set unpublished, writes it again.
		 */
		set_free(&rl->set);
		return;
	}
	s.term = term;
	/* the next revision of the same leadership goes as a change */
	full = !rl->set.term || strcmp(s.leader, rl->set.leader) ||
	       s.seat != rl->set.seat || s.rev != rl->set.rev + 1;
	set_free(&rl->set);
	rl->set = s;
	rl->taken++;
	rl->taken_ms = mono_ms();
	agent_log("smo: relay: %zu policies of %s at revision %llu, term %llu%s",
		  s.n, s.leader, (unsigned long long)s.rev,
		  (unsigned long long)term, full ? " (full)" : "");
	rl->changed(rl->arg, full);
}

void smo_relay_take(struct smo_relay *rl, uint64_t term, const char *value)
{
	consider(rl, term, value);
}

/* Read the key: 0 and etcd's revision in *@at, or -1 (counted). */
static int read_key(struct smo_relay *rl, uint64_t *at)
{
	struct json_object *req = json_object_new_object(), *resp, *h, *kvs, *kv, *v;
	char err[160], *text = NULL;
	const char *b64;
	int rc;

	rl->reads++;
	json_object_object_add(req, "key", etcd_b64(rl->key, strlen(rl->key)));
	rc = etcd_call(rl->e, "/v3/kv/range", req, &resp, err, sizeof(err));
	json_object_put(req);
	rl->owed = rc != 0;
	if (rc) {
		rl->read_errors++;
		snprintf(rl->error, sizeof(rl->error), "%s", err);
		return -1;
	}
	*at = json_object_object_get_ex(resp, "header", &h) ?
	      (uint64_t)etcd_int(h, "revision") : 0;
	if (!json_object_object_get_ex(resp, "kvs", &kvs) ||
	    !(kv = json_object_array_get_idx(kvs, 0))) {
		/* deleted (by hand): nothing to relay until the leader writes again */
		if (rl->set.term) {
			agent_log("smo: relay: %s is gone; the set of term %llu is no longer pushed",
				  rl->key, (unsigned long long)rl->set.term);
			set_free(&rl->set);
		}
		json_object_put(resp);
		return 0;
	}
	b64 = json_object_object_get_ex(kv, "value", &v) ? json_object_get_string(v) : "";
	text = malloc(strlen(b64) / 4 * 3 + 1);
	if (!text || etcd_unb64(b64, text, strlen(b64) / 4 * 3 + 1)) {
		rl->refused++;
		snprintf(rl->error, sizeof(rl->error), "%s: a value that is not base64",
			 rl->key);
	} else {
		consider(rl, (uint64_t)etcd_int(kv, "mod_revision"), text);
	}
	free(text);
	json_object_put(resp);
	return 0;
}

/* From the watcher's thread: one byte, whatever the pipe holds. */
static void wake(void *arg)
{
	struct smo_relay *rl = arg;
	ssize_t n = write(rl->wake_fd[1], "w", 1);

	(void)n;	/* full (EAGAIN): a wake-up is pending anyway */
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
	struct smo_relay *rl = arg;
	char buf[64];
	uint64_t at;

	(void)what;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	rl->wakes++;
	read_key(rl, &at);
}

void smo_relay_retry(struct smo_relay *rl)
{
	uint64_t at;

	if (rl->owed)
		read_key(rl, &at);
}

struct smo_relay *smo_relay_start(struct event_base *base,
				  const char *endpoints, const char *key,
				  smo_relay_fn changed, void *arg, char *err,
				  size_t errlen)
{
	struct smo_relay *rl = calloc(1, sizeof(*rl));
	uint64_t at = 0;

	if (!rl) {
		snprintf(err, errlen, "relay: out of memory");
		return NULL;
	}
	rl->wake_fd[0] = rl->wake_fd[1] = -1;
	snprintf(rl->key, sizeof(rl->key), "%s", key);
	rl->changed = changed;
	rl->arg = arg;
	rl->e = etcd_open(endpoints, err, errlen);
	if (!rl->e)
		goto fail;
	etcd_set_timeouts(rl->e, RELAY_CALL_MS, RELAY_CONNECT_MS);
	if (pipe2(rl->wake_fd, O_NONBLOCK | O_CLOEXEC)) {
		snprintf(err, errlen, "relay: pipe: %s", strerror(errno));
		goto fail;
	}
	rl->ev = event_new(base, rl->wake_fd[0], EV_READ | EV_PERSIST, on_wake, rl);
	if (!rl->ev || event_add(rl->ev, NULL)) {
		snprintf(err, errlen, "relay: no event");
		goto fail;
	}
	/* a first read that fails is not fatal: the watch wakes us later */
	if (read_key(rl, &at))
		agent_log("smo: relay: %s: %s", key, rl->error);
	rl->w = etcd_watcher_start(endpoints, key, "", "", at, wake, rl, err, errlen);
	if (!rl->w)
		goto fail;
	return rl;
fail:
	smo_relay_stop(rl);
	return NULL;
}

void smo_relay_stop(struct smo_relay *rl)
{
	if (!rl)
		return;
	/* the thread first: it may still write the pipe */
	etcd_watcher_stop(rl->w);
	if (rl->ev)
		event_free(rl->ev);
	if (rl->wake_fd[0] >= 0)
		close(rl->wake_fd[0]);
	if (rl->wake_fd[1] >= 0)
		close(rl->wake_fd[1]);
	etcd_close(rl->e);
	set_free(&rl->set);
	free(rl);
}

const struct smo_set *smo_relay_set(const struct smo_relay *rl)
{
	return rl && rl->set.term ? &rl->set : NULL;
}

struct json_object *smo_relay_show(const struct smo_relay *rl)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "key", json_object_new_string(rl->key));
	json_object_object_add(o, "term", json_object_new_uint64(rl->set.term));
	json_object_object_add(o, "leader", json_object_new_string(rl->set.leader));
	json_object_object_add(o, "rev", json_object_new_uint64(rl->set.rev));
	json_object_object_add(o, "policies", json_object_new_uint64(rl->set.n));
	json_object_object_add(o, "sets", json_object_new_uint64(rl->taken));
	/* how long ago: on one machine, two SMOs' ages time the relay */
	json_object_object_add(o, "age_ms", json_object_new_int64(
		rl->set.term ? mono_ms() - rl->taken_ms : 0));
	json_object_object_add(o, "wakes", json_object_new_uint64(rl->wakes));
	json_object_object_add(o, "reads", json_object_new_uint64(rl->reads));
	json_object_object_add(o, "read_errors", json_object_new_uint64(rl->read_errors));
	json_object_object_add(o, "refused", json_object_new_uint64(rl->refused));
	json_object_object_add(o, "watch_errors",
			       json_object_new_uint64(rl->w ? etcd_watcher_errors(rl->w) : 0));
	json_object_object_add(o, "last_error", json_object_new_string(rl->error));
	return o;
}
