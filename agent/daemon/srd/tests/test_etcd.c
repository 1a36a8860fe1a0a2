// SPDX-License-Identifier: GPL-2.0
/*
 * The registry store on a real etcd: three members on loopback (Debian's
 * etcd-server), two SRD stores sharing them, leases that etcd expires in
 * real time, the change log through etcd's watch, compaction, and one
 * member killed with the registry still working. The same contract as
 * test_registry.c, where etcd's nature allows (store_etcd.c).
 */
#define _GNU_SOURCE	/* pipe2 */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "etcd.h"
#include "etcd_watcher.h"
#include "registry.h"
#include "instance_fixture.h"
#include "etcd_cluster.h"
#include "../../../tests/ktap.h"

static char err[256];

struct seen {
	int n, has_c;
	char ids[64][SRD_ID_MAX];
	uint64_t revs[64];
	int ops[64];
	char nodes[64][SRD_NODE_MAX];
};

static int see_inst(const struct srd_instance *i, void *arg)
{
	struct seen *s = arg;

	if (s->n < 64)
		snprintf(s->ids[s->n], SRD_ID_MAX, "%s", i->id);
	if (!strcmp(i->id, "mi-c"))
		s->has_c = 1;
	s->n++;
	return 0;
}

static int see_change(const struct srd_change *c, void *arg)
{
	struct seen *s = arg;

	if (s->n < 64) {
		snprintf(s->ids[s->n], SRD_ID_MAX, "%s", c->inst.id);
		snprintf(s->nodes[s->n], SRD_NODE_MAX, "%s", c->inst.node);
		s->revs[s->n] = c->rev;
		s->ops[s->n] = c->op;
	}
	s->n++;
	return 0;
}

static int put(struct srd_store *s, const char *id, const char *node, int n,
	       uint64_t *rev)
{
	struct srd_instance i;

	mi(&i, id, node, n);
	/*
	 * Only mi-c's expiry is under test: the others get leases that
	 * outlast the slow steps (a member killed, a loaded machine).
	 */
	if (strcmp(id, "mi-c"))
		i.ttl_ms = 60000;
	return s->ops->put(s, &i, now_ms(), rev, err, sizeof(err));
}

/* The watcher's wake-up (another thread): a byte into the pipe. */
static void wake_pipe(void *arg)
{
	ssize_t n = write(*(int *)arg, "w", 1);

	(void)n;
}

/*
 * Wait up to @ms for a wake-up byte on @fd: the time since @since (a
 * now_ms()) when it came, or -1.
 */
static int64_t woken(int fd, int64_t since, int ms)
{
	int64_t t0 = now_ms();
	char b[64];

	while (now_ms() - t0 < ms) {
		if (read(fd, b, sizeof(b)) > 0) {
			int64_t t = now_ms() - since;

			while (read(fd, b, sizeof(b)) > 0)
				;
			return t;
		}
		usleep(1000);
	}
	return -1;
}

/* A watch's events: none is expected. */
static int no_event(struct json_object *result, void *arg)
{
	(void)result;
	(void)arg;
	return 0;
}

int main(void)
{
	struct srd_store *s, *s2;
	struct srd_instance i;
	struct seen sn;
	uint64_t r0, r1, r2, r3, rev;
	int64_t t_c, t, gone = -1;
	int ok;

	ktap_plan(18);

	ok = cluster_up(err, sizeof(err)) == 0;
	ktap_check(ok, "a three-member etcd cluster on loopback answers");
	if (!ok) {
		printf("# %s\n", err);
		return ktap_finish();
	}
	s = srd_store_etcd_open(cluster_endpoints, "/t/srd/", now_ms(), err, sizeof(err));
	if (!s) {
		printf("# %s\n", err);
		cluster_down();
		return ktap_finish();
	}
	r0 = s->ops->revision(s);

	ok = !put(s, "mi-a", "pe1", 1, &r1) && !put(s, "mi-b", "pe1", 2, &r2);
	t_c = now_ms();
	ok = ok && !put(s, "mi-c", "pe2", 3, &r3) && r0 < r1 && r1 < r2 && r2 < r3;
	memset(&sn, 0, sizeof(sn));
	ok = ok && !s->ops->list(s, see_inst, &sn, &rev, err, sizeof(err)) && sn.n == 3 &&
	     rev >= r3 && !strcmp(sn.ids[0], "mi-a") && !strcmp(sn.ids[2], "mi-c");
	ktap_check(ok, "three registrations at increasing revisions, listed");
	if (!ok)
		printf("# %s\n", err);

	mi(&i, "mi-a", "pe7", 1);
	ok = s->ops->put(s, &i, now_ms(), NULL, err, sizeof(err)) &&
	     strstr(err, "id: mi-a is registered on node pe1") &&
	     s->ops->renew(s, "mi-a", "pe7", now_ms(), err, sizeof(err)) &&
	     strstr(err, "registered on node pe1, not pe7") &&
	     s->ops->del(s, "mi-a", "pe7", NULL, err, sizeof(err)) &&
	     strstr(err, "registered on node pe1, not pe7");
	mi(&i, "mi-x", "pe1", 1);
	i.ttl_ms = 1000;
	ok = ok && s->ops->put(s, &i, now_ms(), NULL, err, sizeof(err)) &&
	     strstr(err, "ttl_ms: etcd's shortest lease");
	mi(&i, "mi-x", "pe1", 1);
	strcpy(i.sid, "10.0.0.1");
	ok = ok && s->ops->put(s, &i, now_ms(), NULL, err, sizeof(err)) && strstr(err, "sid:");
	ktap_check(ok, "another node's id (put, renew, delete), a lease under 2 s and a bad sid are refused, by name");

	memset(&sn, 0, sizeof(sn));
	ok = s->ops->changes(s, r0, see_change, &sn, err, sizeof(err)) == 0 && sn.n == 3 &&
	     sn.revs[0] == r1 && sn.revs[2] == r3 && sn.ops[1] == SRD_OP_PUT &&
	     !strcmp(sn.ids[2], "mi-c");
	memset(&sn, 0, sizeof(sn));
	ok = ok && s->ops->changes(s, s->ops->revision(s), see_change, &sn, err, sizeof(err)) == 0 &&
	     sn.n == 0;
	ok = ok && s->ops->changes(s, s->ops->revision(s) + 1000, see_change, &sn, err,
				   sizeof(err)) == -1 && strstr(err, "ahead");
	ktap_check(ok, "changes through etcd's watch: in order, none after the last, a future revision refused");

	/* a second SRD on the same cluster sees them and renews the first's */
	s2 = srd_store_etcd_open(cluster_endpoints, "/t/srd/", now_ms(), err, sizeof(err));
	memset(&sn, 0, sizeof(sn));
	ok = s2 && !s2->ops->list(s2, see_inst, &sn, &rev, err, sizeof(err)) && sn.n == 3 &&
	     !s2->ops->renew(s2, "mi-a", "pe1", now_ms(), err, sizeof(err));
	ktap_check(ok, "a second SRD sharing the cluster lists them and renews another's lease");

	/*
	 * Re-registered through one SRD under a new lease, renewed through
	 * the other, which had renewed the old one before: it must renew
	 * the new lease, not the old (revoked) one it saw last.
	 */
	ok = !put(s, "mi-e", "pe4", 5, NULL) &&
	     !s2->ops->renew(s2, "mi-e", "pe4", now_ms(), err, sizeof(err)) &&
	     !put(s, "mi-e", "pe4", 5, NULL) &&
	     !s2->ops->renew(s2, "mi-e", "pe4", now_ms(), err, sizeof(err)) &&
	     !s->ops->del(s, "mi-e", "pe4", NULL, err, sizeof(err));
	if (!ok)
		printf("# %s\n", err);
	ktap_check(ok, "a renewal through one SRD follows a re-registration through another");
	r3 = s->ops->revision(s);

	/*
	 * Heartbeats every 1 s, lease 3 s: a and b beat, c is silent since
	 * its registration. etcd must remove c after 3 s, not before, and
	 * not much after (it checks leases every 500 ms).
	 */
	ok = 1;
	for (t = now_ms(); now_ms() - t_c < 6000 && gone < 0;) {
		if (now_ms() - t >= 1000) {
			t = now_ms();
			ok &= !s->ops->renew(s, "mi-a", "pe1", t, err, sizeof(err));
			ok &= !s2->ops->renew(s2, "mi-b", "pe1", t, err, sizeof(err));
		}
		memset(&sn, 0, sizeof(sn));
		if (s->ops->list(s, see_inst, &sn, &rev, err, sizeof(err)))
			ok = 0;
		else if (!sn.has_c)
			gone = now_ms() - t_c;
		sleep_ms(50);
	}
	printf("# mi-c removed by etcd %" PRId64 " ms after its last heartbeat (lease 3000 ms)\n",
	       gone);
	ok = ok && gone >= 2900 && gone <= 4500 && sn.n == 2;
	ktap_check(ok, "a silent instance is expired by etcd after its 3 s lease, the renewed ones stay");

	memset(&sn, 0, sizeof(sn));
	ok = s->ops->changes(s, r3, see_change, &sn, err, sizeof(err)) == 0 && sn.n == 1 &&
	     sn.ops[0] == SRD_OP_DEL && !strcmp(sn.ids[0], "mi-c") &&
	     !strcmp(sn.nodes[0], "pe2");
	ktap_check(ok, "the expiry comes out of changes() as a deletion, with the node");

	ok = !s->ops->del(s, "mi-b", NULL, &rev, err, sizeof(err)) &&
	     s->ops->renew(s, "mi-b", "pe1", now_ms(), err, sizeof(err)) &&
	     strstr(err, "no instance mi-b") &&
	     s->ops->del(s, "mi-b", NULL, NULL, err, sizeof(err)) && strstr(err, "no instance");
	ktap_check(ok, "delete: gone for renewals, a second delete says so");

	ok = s->ops->renew(s, "mi-c", "pe2", now_ms(), err, sizeof(err)) &&
	     strstr(err, "no instance mi-c");
	ktap_check(ok, "renewing an expired instance fails: it must register again");

	/* one member dies: the registry keeps working on the other two */
	cluster_kill(0);
	t = now_ms();
	while ((ok = !put(s, "mi-d", "pe3", 4, &rev)) == 0 && now_ms() - t < 10000)
		sleep_ms(200);
	printf("# member 0 killed: the next registration took %" PRId64 " ms (%s)\n",
	       now_ms() - t, ok ? "done" : err);
	memset(&sn, 0, sizeof(sn));
	ok = ok && !s->ops->list(s, see_inst, &sn, &rev, err, sizeof(err)) && sn.n == 2 &&
	     !s2->ops->renew(s2, "mi-d", "pe3", now_ms(), err, sizeof(err));
	ktap_check(ok, "with one member killed, registrations, lists and renewals go on");

	/* an SRD restart: leases are found again from the keys */
	s->ops->close(s);
	s = srd_store_etcd_open(cluster_endpoints, "/t/srd/", now_ms(), err, sizeof(err));
	ok = s && !s->ops->renew(s, "mi-d", "pe3", now_ms(), err, sizeof(err)) &&
	     !s->ops->renew(s, "mi-a", "pe1", now_ms(), err, sizeof(err));
	ktap_check(ok, "a restarted SRD renews what was registered before");
	if (!s) {
		cluster_down();
		return ktap_finish();
	}

	/* compaction: a revision etcd no longer keeps is SRD_GAP */
	{
		struct etcd *e = etcd_open(cluster_endpoints, err, sizeof(err));
		struct json_object *req = json_object_new_object(), *resp;

		json_object_object_add(req, "revision", json_object_new_int64(s->ops->revision(s)));
		ok = e && !etcd_call(e, "/v3/kv/compaction", req, &resp, err, sizeof(err));
		if (ok)
			json_object_put(resp);
		json_object_put(req);
		etcd_close(e);
		ok = ok && s->ops->changes(s, r0, see_change, &sn, err, sizeof(err)) == SRD_GAP;
	}
	ktap_check(ok, "after a compaction, an old revision is SRD_GAP: take a full list");

	/*
	 * s2 watches (the SRD role's path for changes made through another
	 * SRD): a registration and a deletion through s each wake it at once
	 * and come out of its changes(); the marker its own changes() writes
	 * wakes nobody, or every catch-up would start the next.
	 */
	{
		int wfd[2] = { -1, -1 };
		int64_t w1 = -1, w2 = -1, quiet = 0;

		t = -1;
		uint64_t before;

		ok = s2 && !pipe2(wfd, O_NONBLOCK | O_CLOEXEC) &&
		     !s2->ops->watch(s2, wake_pipe, &wfd[1], err, sizeof(err));
		/*
		 * The watcher starts at s2's last revision, which the
		 * compaction above made too old: etcd says so and the
		 * watcher wakes once for that (a full table, in the SRD).
		 */
		woken(wfd[0], now_ms(), 1000);
		before = s->ops->revision(s);
		t = now_ms();
		ok = ok && !put(s, "mi-w", "pe5", 6, NULL) && (w1 = woken(wfd[0], t, 3000)) >= 0;
		memset(&sn, 0, sizeof(sn));
		ok = ok && s2->ops->changes(s2, before, see_change, &sn, err, sizeof(err)) == 0 &&
		     sn.n == 1 && !strcmp(sn.ids[0], "mi-w") && sn.ops[0] == SRD_OP_PUT;
		ok = ok && (quiet = woken(wfd[0], now_ms(), 2500)) == -1;
		t = now_ms();
		ok = ok && !s->ops->del(s, "mi-w", "pe5", NULL, err, sizeof(err)) &&
		     (w2 = woken(wfd[0], t, 3000)) >= 0;
		printf("# watch: woken %" PRId64 " ms after a put, %" PRId64
		       " ms after a delete through the other SRD; after its own catch-up: %s\n",
		       w1, w2, quiet == -1 ? "quiet" : "woken");
		if (!ok)
			printf("# %s\n", err);
		ktap_check(ok, "a second SRD's watch: woken by the other's put and delete, its change read, its own marker wakes nothing");
		/* close() stops the watcher thread (ASan sees a leak or a race) */
		woken(wfd[0], now_ms(), 1000);	/* what the delete still brings */
		if (s2) {
			int64_t t0 = now_ms();

			s2->ops->close(s2);
			t = now_ms() - t0;
			s2 = srd_store_etcd_open(cluster_endpoints, "/t/srd/", now_ms(), err,
						 sizeof(err));
		}
		quiet = woken(wfd[0], now_ms(), 1500);
		ok = s2 && t < 2000 && quiet == -1;
		printf("# the watcher stopped in %" PRId64 " ms; after: %s\n", t,
		       quiet == -1 ? "quiet" : "woken");
		ktap_check(ok, "close() stops the watcher within 2 s; nothing wakes after it");
		if (wfd[0] >= 0) {
			close(wfd[0]);
			close(wfd[1]);
		}
	}

	/*
	 * A standing watch on a quiet key (the SMO's relay of its set):
	 * the end of each one-second stream is not an error (it was, and
	 * cost a 200 ms pause and a move to the next member each time),
	 * and puts spread across stream ends each wake it.
	 */
	{
		struct etcd *e = etcd_open(cluster_endpoints, err, sizeof(err));
		struct json_object *q = json_object_new_object(), *resp;
		struct etcd_watcher *w;
		int wfd[2] = { -1, -1 };
		int64_t lat, worst = -1;
		uint64_t errs = 99;

		ok = e && !pipe2(wfd, O_NONBLOCK | O_CLOEXEC);
		w = ok ? etcd_watcher_start(cluster_endpoints, "/t/quiet", "", "", 0,
					    wake_pipe, &wfd[1], err, sizeof(err)) : NULL;
		ok = ok && w;
		sleep_ms(3500);
		woken(wfd[0], now_ms(), 10);	/* a wake for the compaction above */
		json_object_object_add(q, "key", etcd_b64("/t/quiet", 8));
		json_object_object_add(q, "value", etcd_b64("x", 1));
		for (int k = 0; ok && k < 8; k++) {
			t = now_ms();
			ok = !etcd_call(e, "/v3/kv/put", q, &resp, err, sizeof(err));
			if (ok)
				json_object_put(resp);
			lat = ok ? woken(wfd[0], t, 3000) : -1;
			ok = ok && lat >= 0;
			worst = lat > worst ? lat : worst;
			sleep_ms(170);
		}
		errs = w ? etcd_watcher_errors(w) : 99;
		printf("# a quiet key's watch: %" PRIu64 " errors in about 5 s of streams; 8 puts, the slowest woke it after %" PRId64 " ms\n",
		       errs, worst);
		ktap_check(ok && errs == 0,
			   "a standing watch: a stream's end is no error; each of 8 puts across stream ends wakes it");
		etcd_watcher_stop(w);
		json_object_put(q);
		etcd_close(e);
		if (wfd[0] >= 0) {
			close(wfd[0]);
			close(wfd[1]);
		}
	}

	ok = !s->ops->del(s, "mi-a", NULL, NULL, err, sizeof(err)) &&
	     !s->ops->del(s, "mi-d", NULL, NULL, err, sizeof(err));
	memset(&sn, 0, sizeof(sn));
	ok = ok && !s->ops->list(s, see_inst, &sn, &rev, err, sizeof(err)) && sn.n == 0;
	ktap_check(ok, "deleting the rest leaves the registry empty");

	if (s2)
		s2->ops->close(s2);
	s->ops->close(s);

	/*
	 * Member 1 killed too: member 2 is alone, with no quorum and soon no
	 * leader. A watch on it must end with etcd's "no leader" (the gRPC
	 * metadata hasleader that every request carries), not stay open and
	 * silent until it times out: the watcher then moves on to a member
	 * that has one. Without the metadata this case fails (timed out).
	 */
	{
		const char *last = strrchr(cluster_endpoints, ',');
		struct json_object *req = json_object_new_object(), *cr;
		struct etcd *e;
		int64_t took = -1;
		int r = 0;

		cluster_kill(1);
		e = last ? etcd_open(last + 1, err, sizeof(err)) : NULL;
		cr = json_object_new_object();
		json_object_object_add(cr, "key", etcd_b64("/t/lone", 7));
		json_object_object_add(req, "create_request", cr);
		t = now_ms();
		ok = 0;
		/* until member 2 has noticed: an election timeout, about 1 s */
		while (e && !ok && now_ms() - t < 15000) {
			int64_t t1 = now_ms();

			err[0] = '\0';
			r = etcd_watch(e, req, no_event, NULL, 4000, err, sizeof(err));
			took = now_ms() - t1;
			ok = r == -1 && strstr(err, "no leader") && took < 2000;
			if (!ok)
				sleep_ms(300);
		}
		printf("# a watch on a member without a leader: %s after %" PRId64 " ms (%" PRId64 " ms after the kill)\n",
		       err, took, now_ms() - t);
		ktap_check(ok, "a watch on a member cut off from its leader ends at once with \"no leader\", not at its timeout");
		json_object_put(req);
		etcd_close(e);
	}
	cluster_down();
	return ktap_finish();
}
