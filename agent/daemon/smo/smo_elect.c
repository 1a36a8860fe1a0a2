// SPDX-License-Identifier: GPL-2.0
/* The SMO's election in a thread of its own (smo_elect.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "election.h"
#include "smo_elect.h"

struct smo_elect {
	pthread_t thread;
	bool running;
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* a value handed, or the stop */
	struct election *el;
	long step_ms;
	void (*wake)(void *arg);
	void *arg;
	/* under mu */
	bool stop;
	char key[256];
	char *value;			/* handed, not yet taken by the thread */
	struct smo_elect_state st;	/* what the loop takes */
};

static int64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000ll + t.tv_nsec / 1000000;
}

static struct timespec mono_at(int64_t ms)
{
	return (struct timespec){ ms / 1000, ms % 1000 * 1000000 };
}

/* Write @value: the outcome for the loop, which is then woken. */
static void write_one(struct smo_elect *t, const char *key, char *value)
{
	char err[sizeof(t->st.put_error)] = "";
	int64_t term = 0;
	int rc = election_put(t->el, key, value, &term, err, sizeof(err));

	pthread_mutex_lock(&t->mu);
	free(t->st.value);	/* an outcome the loop never took */
	t->st.written = true;
	t->st.put_rc = rc == 1 && term > 0 ? 1 : rc == 1 ? -1 : rc;
	t->st.term = term > 0 ? (uint64_t)term : 0;
	t->st.epoch = election_cluster(t->el);
	t->st.value = value;
	snprintf(t->st.put_error, sizeof(t->st.put_error), "%s", err);
	t->st.done++;
	pthread_mutex_unlock(&t->mu);
	t->wake(t->arg);
}

static void step_one(struct smo_elect *t)
{
	char leader[sizeof(t->st.leader)], err[sizeof(t->st.error)] = "";
	int rc = election_step(t->el, leader, sizeof(leader), err, sizeof(err));

	pthread_mutex_lock(&t->mu);
	t->st.steps++;
	t->st.rc = rc;
	memcpy(t->st.leader, leader, sizeof(leader));
	if (rc < 0) {
		t->st.errors++;
		memcpy(t->st.error, err, sizeof(err));
	}
	pthread_mutex_unlock(&t->mu);
	t->wake(t->arg);
}

static void *elect_main(void *arg)
{
	struct smo_elect *t = arg;
	int64_t next = mono_ms();

	pthread_mutex_lock(&t->mu);
	while (!t->stop) {
		struct timespec at = mono_at(next);
		char key[sizeof(t->key)], *value;

		if (!t->value && mono_ms() < next &&
		    pthread_cond_timedwait(&t->cv, &t->mu, &at) != ETIMEDOUT)
			continue;	/* handed a value, or stopped: look again */
		/*
		 * A step that is due goes before a value waiting to be
		 * written: values applied faster than a write takes (a member
		 * that hangs each one for its bound) must not starve the
		 * keep-alive, or the leader would lose its lease.
		 */
		value = mono_ms() < next ? t->value : NULL;
		if (value)
			t->value = NULL;
		memcpy(key, t->key, sizeof(key));
		pthread_mutex_unlock(&t->mu);
		if (value) {
			write_one(t, key, value);
		} else {
			/* a step every step_ms from the last one's start */
			next = mono_ms() + t->step_ms;
			step_one(t);
		}
		pthread_mutex_lock(&t->mu);
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

struct smo_elect *smo_elect_start(struct election *el, long step_ms,
				  void (*wake)(void *arg), void *arg,
				  char *err, size_t errlen)
{
	struct smo_elect *t = calloc(1, sizeof(*t));
	pthread_condattr_t ca;

	if (!t) {
		snprintf(err, errlen, "election: out of memory");
		return NULL;
	}
	t->el = el;
	t->step_ms = step_ms;
	t->wake = wake;
	t->arg = arg;
	t->st.rc = -1;
	pthread_mutex_init(&t->mu, NULL);
	/* the step's deadline on the monotonic clock, as the lease's */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&t->thread, NULL, elect_main, t)) {
		snprintf(err, errlen, "election: cannot start a thread");
		smo_elect_stop(t);
		return NULL;
	}
	t->running = true;
	return t;
}

void smo_elect_write(struct smo_elect *t, const char *key, char *value)
{
	pthread_mutex_lock(&t->mu);
	if (t->value) {
		free(t->value);	/* superseded: the newer set is the one to write */
		t->st.done++;
	}
	t->value = value;
	t->st.handed++;
	snprintf(t->key, sizeof(t->key), "%s", key);
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
}

void smo_elect_take(struct smo_elect *t, struct smo_elect_state *out)
{
	pthread_mutex_lock(&t->mu);
	*out = t->st;
	t->st.written = false;
	t->st.value = NULL;
	pthread_mutex_unlock(&t->mu);
}

void smo_elect_stop(struct smo_elect *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	t->stop = true;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
	if (t->running)
		pthread_join(t->thread, NULL);
	free(t->value);
	free(t->st.value);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
}
