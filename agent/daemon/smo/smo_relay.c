// SPDX-License-Identifier: GPL-2.0
/*
 * The relay of smo_relay.h: the leader's set from one etcd key to this
 * SMO. The watcher's thread says the key changed; the reader's thread
 * reads it (at most 1 s when a member does not answer, a millisecond or
 * two on a healthy etcd) and wakes the loop through a pipe; the loop
 * takes the text read. A set is taken only if its term (the key's
 * mod_revision) is above the one held, or of another etcd cluster (a
 * restore: its revisions went back), so a read that a slower path
 * overtook changes nothing.
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

#include "etcd.h"
#include "etcd_watcher.h"
#include "json_strict.h"
#include "log.h"
#include "smo_relay.h"

/* a read: how long a stop may wait for it */
#define RELAY_CALL_MS		1000
#define RELAY_CONNECT_MS	500
/* a read that failed is made again after this */
#define RELAY_RETRY_MS		1000
/*
 * A read every RELAY_REREAD_S even when the watch is quiet: the watch of
 * an etcd restored from a snapshot, started from a revision the restored
 * cluster has not reached, stays silent.
 */
#define RELAY_REREAD_S		30
/* the whole set, all nodes' (the wire's limit is per node) */
#define RELAY_POLICIES_MAX	65536

/* One read of the key, as the reader's thread hands it to the loop. */
struct relay_read {
	bool done;		/* a read ended that the loop has not taken */
	int rc;			/* 0, or -1: etcd not reached (error) */
	bool gone;		/* no such key */
	uint64_t term, epoch;	/* its mod_revision, etcd's cluster_id */
	uint64_t at;		/* etcd's revision when it answered */
	char *text;		/* the value decoded, or NULL: not base64 */
	char error[160];
};

struct smo_relay {
	struct etcd *e;			/* the reader's (the loop's at start) */
	struct etcd_watcher *w;		/* its thread's own connection */
	int wake_fd[2];			/* the reader writes, the loop reads */
	struct event *ev;
	char key[256];
	struct smo_set set;
	smo_relay_fn changed;
	void *arg;
	/* the reader's thread */
	pthread_t thread;
	bool running;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop, want;		/* under mu: stop; the watch woke */
	struct relay_read got;		/* under mu */
	_Atomic uint64_t reads, read_errors, wakes;
	uint64_t refused, taken, epochs;
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

/* @text written at @term in etcd cluster @epoch: taken if newer. */
static void consider(struct smo_relay *rl, uint64_t term, uint64_t epoch,
		     const char *text)
{
	struct smo_set s;
	char err[160];
	bool full, other;

	/*
	 * Another cluster (etcd restored from a snapshot: its revisions
	 * went back) is newer whatever its term; 0 is unknown, not other.
	 */
	other = epoch && rl->set.epoch && epoch != rl->set.epoch;
	if (term <= rl->set.term && !other)
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
	if (other) {
		rl->epochs++;
		agent_log("smo: relay: etcd cluster %llx, was %llx (restored?): its term %llu taken after %llu",
			  (unsigned long long)epoch, (unsigned long long)rl->set.epoch,
			  (unsigned long long)term, (unsigned long long)rl->set.term);
	}
	s.term = term;
	s.epoch = epoch;
	/* the next revision of the same leadership goes as a change */
	full = !rl->set.term || other || strcmp(s.leader, rl->set.leader) ||
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

void smo_relay_take(struct smo_relay *rl, uint64_t term, uint64_t epoch,
		    const char *value)
{
	consider(rl, term, epoch, value);
}

/* Read the key into @out (its text malloc()ed). Any thread, one at a time. */
static void read_key(struct smo_relay *rl, struct relay_read *out)
{
	struct json_object *req = json_object_new_object(), *resp, *h, *kvs, *kv, *v;
	const char *b64;
	size_t size;
	int rc;

	memset(out, 0, sizeof(*out));
	out->done = true;
	atomic_fetch_add(&rl->reads, 1);
	json_object_object_add(req, "key", etcd_b64(rl->key, strlen(rl->key)));
	rc = etcd_call(rl->e, "/v3/kv/range", req, &resp, out->error,
		       sizeof(out->error));
	json_object_put(req);
	if (rc) {
		atomic_fetch_add(&rl->read_errors, 1);
		out->rc = -1;
		return;
	}
	/* cluster_id: a uint64 as a decimal string, above int64's range too */
	if (json_object_object_get_ex(resp, "header", &h)) {
		out->at = (uint64_t)etcd_int(h, "revision");
		if (json_object_object_get_ex(h, "cluster_id", &v))
			out->epoch = strtoull(json_object_get_string(v), NULL, 10);
	}
	if (!json_object_object_get_ex(resp, "kvs", &kvs) ||
	    !(kv = json_object_array_get_idx(kvs, 0))) {
		out->gone = true;
		json_object_put(resp);
		return;
	}
	out->term = (uint64_t)etcd_int(kv, "mod_revision");
	b64 = json_object_object_get_ex(kv, "value", &v) ? json_object_get_string(v) : "";
	size = strlen(b64) / 4 * 3 + 1;
	out->text = malloc(size);
	if (out->text && etcd_unb64(b64, out->text, size)) {
		free(out->text);
		out->text = NULL;
	}
	json_object_put(resp);
}

/* A read, on the loop: what it says about the set. */
static void apply_read(struct smo_relay *rl, struct relay_read *r)
{
	if (r->rc) {
		snprintf(rl->error, sizeof(rl->error), "%s", r->error);
	} else if (r->gone) {
		/* deleted (by hand): nothing to relay until the leader writes again */
		if (rl->set.term) {
			agent_log("smo: relay: %s is gone; the set of term %llu is no longer pushed",
				  rl->key, (unsigned long long)rl->set.term);
			set_free(&rl->set);
		}
	} else if (!r->text) {
		rl->refused++;
		snprintf(rl->error, sizeof(rl->error), "%s: a value that is not base64",
			 rl->key);
	} else {
		consider(rl, r->term, r->epoch, r->text);
	}
	free(r->text);
	r->text = NULL;
}

/* From the watcher's thread: the reader reads. */
static void wake(void *arg)
{
	struct smo_relay *rl = arg;

	atomic_fetch_add(&rl->wakes, 1);
	pthread_mutex_lock(&rl->mu);
	rl->want = true;
	pthread_cond_signal(&rl->cv);
	pthread_mutex_unlock(&rl->mu);
}

/*
 * The reader: a read when the watch woke (a write), again every
 * RELAY_RETRY_MS while the last one failed (the watch wakes only for a
 * write, so a read lost to a fault would wait for the next one), and
 * every RELAY_REREAD_S in any case.
 */
static void *reader_main(void *arg)
{
	struct smo_relay *rl = arg;
	struct relay_read r;
	bool owed = false;
	ssize_t n;

	pthread_mutex_lock(&rl->mu);
	while (!rl->stop) {
		struct timespec at;

		if (!rl->want) {
			clock_gettime(CLOCK_MONOTONIC, &at);
			at.tv_sec += owed ? RELAY_RETRY_MS / 1000 : RELAY_REREAD_S;
			if (pthread_cond_timedwait(&rl->cv, &rl->mu, &at) != ETIMEDOUT)
				continue;	/* woken, or stopped: look again */
		}
		rl->want = false;
		pthread_mutex_unlock(&rl->mu);
		read_key(rl, &r);
		owed = r.rc != 0;
		pthread_mutex_lock(&rl->mu);
		/*
		 * The newest read is what etcd holds: an older one not taken
		 * goes, unless this one failed (counted) and that one did not.
		 */
		if (r.rc && rl->got.done && !rl->got.rc) {
			free(r.text);
		} else {
			free(rl->got.text);
			rl->got = r;
		}
		n = write(rl->wake_fd[1], "w", 1);
		(void)n;	/* full (EAGAIN): a wake-up is pending anyway */
	}
	pthread_mutex_unlock(&rl->mu);
	return NULL;
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
	struct smo_relay *rl = arg;
	struct relay_read r;
	char buf[64];

	(void)what;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	pthread_mutex_lock(&rl->mu);
	r = rl->got;
	memset(&rl->got, 0, sizeof(rl->got));
	pthread_mutex_unlock(&rl->mu);
	if (r.done)
		apply_read(rl, &r);
}

struct smo_relay *smo_relay_start(struct event_base *base,
				  const char *endpoints, const char *key,
				  smo_relay_fn changed, void *arg, char *err,
				  size_t errlen)
{
	struct smo_relay *rl = calloc(1, sizeof(*rl));
	struct relay_read r;
	pthread_condattr_t ca;
	bool owed;

	if (!rl) {
		snprintf(err, errlen, "relay: out of memory");
		return NULL;
	}
	rl->wake_fd[0] = rl->wake_fd[1] = -1;
	snprintf(rl->key, sizeof(rl->key), "%s", key);
	rl->changed = changed;
	rl->arg = arg;
	pthread_mutex_init(&rl->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&rl->cv, &ca);
	pthread_condattr_destroy(&ca);
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
	/*
	 * The first read on the loop, at start (the watch starts at its
	 * revision); one that fails is not fatal: the reader reads again.
	 */
	read_key(rl, &r);
	owed = r.rc != 0;
	if (owed)
		agent_log("smo: relay: %s: %s", key, r.error);
	apply_read(rl, &r);
	rl->w = etcd_watcher_start(endpoints, key, "", "", r.at,
				   wake, rl, err, errlen);
	if (!rl->w)
		goto fail;
	rl->want = owed;
	if (pthread_create(&rl->thread, NULL, reader_main, rl)) {
		snprintf(err, errlen, "relay: cannot start a thread");
		goto fail;
	}
	rl->running = true;
	return rl;
fail:
	smo_relay_stop(rl);
	return NULL;
}

void smo_relay_stop(struct smo_relay *rl)
{
	if (!rl)
		return;
	/* the threads first: the watcher wakes the reader, which writes the pipe */
	etcd_watcher_stop(rl->w);
	pthread_mutex_lock(&rl->mu);
	rl->stop = true;
	pthread_cond_signal(&rl->cv);
	pthread_mutex_unlock(&rl->mu);
	if (rl->running)
		pthread_join(rl->thread, NULL);
	free(rl->got.text);
	if (rl->ev)
		event_free(rl->ev);
	if (rl->wake_fd[0] >= 0)
		close(rl->wake_fd[0]);
	if (rl->wake_fd[1] >= 0)
		close(rl->wake_fd[1]);
	etcd_close(rl->e);
	set_free(&rl->set);
	pthread_cond_destroy(&rl->cv);
	pthread_mutex_destroy(&rl->mu);
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
	json_object_object_add(o, "epoch", json_object_new_uint64(rl->set.epoch));
	json_object_object_add(o, "epoch_changes", json_object_new_uint64(rl->epochs));
	json_object_object_add(o, "wakes", json_object_new_uint64(atomic_load(&rl->wakes)));
	json_object_object_add(o, "reads", json_object_new_uint64(atomic_load(&rl->reads)));
	json_object_object_add(o, "read_errors",
			       json_object_new_uint64(atomic_load(&rl->read_errors)));
	json_object_object_add(o, "refused", json_object_new_uint64(rl->refused));
	json_object_object_add(o, "watch_errors",
			       json_object_new_uint64(rl->w ? etcd_watcher_errors(rl->w) : 0));
	json_object_object_add(o, "last_error", json_object_new_string(rl->error));
	return o;
}
