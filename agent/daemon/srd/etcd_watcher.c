// SPDX-License-Identifier: GPL-2.0
/* The standing etcd watch of etcd_watcher.h. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "etcd.h"
#include "etcd_watcher.h"

#define WINDOW_MS	1000	/* one stream's life: the stop latency */
#define KEY_MAX		512

struct etcd_watcher {
	pthread_t thread;
	struct etcd *e;
	char key[KEY_MAX], end[KEY_MAX], skip[KEY_MAX];
	void (*wake)(void *arg);
	void *arg;
	_Atomic uint64_t rev;	/* of the last event: the next stream starts after it */
	_Atomic uint64_t errors;
	atomic_int stop;
};

/* One answer of the stream: note its revisions, wake for foreign keys. */
static int on_result(struct json_object *r, void *arg)
{
	struct etcd_watcher *w = arg;
	struct json_object *evs, *kv, *k;
	char name[KEY_MAX];
	int wake = 0;
	size_t n;

	if (etcd_int(r, "compact_revision")) {
		/* older revisions are gone: changes() will say SRD_GAP */
		atomic_store(&w->rev, (uint64_t)etcd_int(r, "compact_revision") - 1);
		w->wake(w->arg);
		return 1;
	}
	n = json_object_object_get_ex(r, "events", &evs) ?
	    json_object_array_length(evs) : 0;
	for (size_t i = 0; i < n; i++) {
		struct json_object *ev = json_object_array_get_idx(evs, i);
		uint64_t rev;

		if (!json_object_object_get_ex(ev, "kv", &kv))
			continue;
		rev = (uint64_t)etcd_int(kv, "mod_revision");
		if (rev > atomic_load(&w->rev))
			atomic_store(&w->rev, rev);
		if (!json_object_object_get_ex(kv, "key", &k) ||
		    etcd_unb64(json_object_get_string(k), name, sizeof(name)) ||
		    strcmp(name, w->skip))
			wake = 1;
	}
	if (wake)
		w->wake(w->arg);
	return atomic_load(&w->stop) ? 1 : 0;
}

static void *watcher_main(void *arg)
{
	struct etcd_watcher *w = arg;
	char err[256];

	while (!atomic_load(&w->stop)) {
		struct json_object *req = json_object_new_object(),
				   *cr = json_object_new_object();
		int rc;

		json_object_object_add(cr, "key", etcd_b64(w->key, strlen(w->key)));
		json_object_object_add(cr, "range_end", etcd_b64(w->end, strlen(w->end)));
		json_object_object_add(cr, "start_revision",
				       json_object_new_int64((int64_t)atomic_load(&w->rev) + 1));
		json_object_object_add(req, "create_request", cr);
		err[0] = '\0';
		rc = etcd_watch(w->e, req, on_result, w, WINDOW_MS, err, sizeof(err));
		json_object_put(req);
		/* the window ending is the normal case; anything else is a fault */
		if (rc && !strstr(err, "timed out")) {
			atomic_fetch_add(&w->errors, 1);
			nanosleep(&(struct timespec){ 0, 200 * 1000000L }, NULL);
		}
	}
	return NULL;
}

struct etcd_watcher *etcd_watcher_start(const char *endpoints, const char *key,
					const char *range_end, const char *skip,
					uint64_t from, void (*wake)(void *arg),
					void *arg, char *err, size_t errlen)
{
	struct etcd_watcher *w;

	if (strlen(key) >= KEY_MAX || strlen(range_end) >= KEY_MAX ||
	    strlen(skip) >= KEY_MAX) {
		snprintf(err, errlen, "etcd watch: key longer than %d bytes", KEY_MAX - 1);
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		snprintf(err, errlen, "etcd watch: out of memory");
		return NULL;
	}
	snprintf(w->key, sizeof(w->key), "%s", key);
	snprintf(w->end, sizeof(w->end), "%s", range_end);
	snprintf(w->skip, sizeof(w->skip), "%s", skip);
	w->wake = wake;
	w->arg = arg;
	atomic_init(&w->rev, from);
	w->e = etcd_open(endpoints, err, errlen);
	if (!w->e) {
		free(w);
		return NULL;
	}
	/* a stream lives WINDOW_MS; reaching a member must not take longer */
	etcd_set_timeouts(w->e, WINDOW_MS, WINDOW_MS / 2);
	if (pthread_create(&w->thread, NULL, watcher_main, w)) {
		snprintf(err, errlen, "etcd watch: cannot start a thread");
		etcd_close(w->e);
		free(w);
		return NULL;
	}
	return w;
}

void etcd_watcher_stop(struct etcd_watcher *w)
{
	if (!w)
		return;
	atomic_store(&w->stop, 1);
	pthread_join(w->thread, NULL);
	etcd_close(w->e);
	free(w);
}

uint64_t etcd_watcher_revision(struct etcd_watcher *w)
{
	return atomic_load(&w->rev);
}

uint64_t etcd_watcher_errors(struct etcd_watcher *w)
{
	return atomic_load(&w->errors);
}
