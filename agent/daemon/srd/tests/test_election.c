// SPDX-License-Identifier: GPL-2.0
/*
 * The SMO leader election (election.c) on a three-member etcd: one leader
 * at a time, a takeover within two lease lengths after the leader's
 * process is killed, resignation, and a leader that keeps its seat while
 * an etcd member dies.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "election.h"
#include "etcd.h"
#include "etcd_cluster.h"
#include "../../../tests/ktap.h"

#define TTL_S	3	/* each etcd call of a step gets 750 ms */
#define KEY	"/t/smo/leader"
#define PKEY	"/t/smo/policies"

static char err[256], who[64];

/* A candidate in its own process: leads, then says so on @fd, forever. */
static void candidate(int fd)
{
	struct election *el = election_open(cluster_endpoints, KEY, "smo-a", TTL_S,
					    err, sizeof(err));
	int told = 0;

	if (!el)
		_exit(1);
	for (;;) {
		if (election_step(el, who, sizeof(who), err, sizeof(err)) == 1 && !told) {
			told = write(fd, "L", 1) == 1;
		}
		sleep_ms(TTL_S * 1000 / 3);
	}
}

/* A step with an answer: again while etcd could not be reached in time. */
static int step_definite(struct election *el)
{
	int rc = -1, k;

	for (k = 0; rc < 0 && k < 20; k++) {
		rc = election_step(el, who, sizeof(who), err, sizeof(err));
		if (rc < 0)
			sleep_ms(100);
	}
	return rc;
}

int main(void)
{
	struct election *b, *c;
	int p[2], ok, rc, k;
	int64_t t, took;
	pid_t a;
	char ch;

	ktap_plan(11);
	ok = cluster_up(err, sizeof(err)) == 0;
	ktap_check(ok, "a three-member etcd cluster on loopback answers");
	if (!ok) {
		printf("# %s\n", err);
		return ktap_finish();
	}

	if (pipe(p))
		return 1;
	fflush(stdout);
	a = fork();
	if (a == 0) {
		close(p[0]);
		candidate(p[1]);
	}
	close(p[1]);
	ok = read(p[0], &ch, 1) == 1 && ch == 'L';
	ktap_check(ok, "the first candidate, alone, leads");

	/* B campaigns every third of a lease for two leases: never leads */
	b = election_open(cluster_endpoints, KEY, "smo-b", TTL_S, err, sizeof(err));
	for (k = 0, ok = b != NULL; ok && k < 6; k++) {
		rc = election_step(b, who, sizeof(who), err, sizeof(err));
		ok = rc == 0 && !strcmp(who, "smo-a");
		sleep_ms(TTL_S * 1000 / 3);
	}
	ktap_check(ok, "a second candidate follows the live leader, smo-a, for two lease lengths");

	kill(a, SIGKILL);
	waitpid(a, NULL, 0);
	t = now_ms();
	while ((rc = election_step(b, who, sizeof(who), err, sizeof(err))) != 1 &&
	       now_ms() - t < 4 * TTL_S * 1000)
		sleep_ms(TTL_S * 1000 / 3);
	took = now_ms() - t;
	printf("# leader smo-a killed: smo-b took over after %" PRId64 " ms (lease %d s)\n",
	       took, TTL_S);
	ktap_check(rc == 1 && took <= 2 * TTL_S * 1000,
		   "after the leader is killed, the follower takes over within two lease lengths");

	/*
	 * A leader cut off from etcd (its only member stopped with SIGSTOP)
	 * must stop acting before anyone else starts: its deadline passes
	 * before the other candidate wins the seat.
	 */
	election_resign(b);
	{
		char ep[3][64];
		struct election *x, *y;
		int64_t t_stop, x_end = -1, y_win = -1;
		int x_still = 1;

		{
			const char *q = cluster_endpoints;

			for (k = 0; k < 3; k++) {
				sscanf(q, "%63[^,]", ep[k]);
				q += strlen(ep[k]) + 1;
			}
		}
		x = election_open(ep[1], KEY, "smo-x", TTL_S, err, sizeof(err));
		y = election_open(ep[2], KEY, "smo-y", TTL_S, err, sizeof(err));
		ok = x && y && election_step(x, who, sizeof(who), err, sizeof(err)) == 1;
		kill(cluster_member[1], SIGSTOP);
		t_stop = now_ms();
		while (ok && now_ms() - t_stop < 4 * TTL_S * 1000 && y_win < 0) {
			election_step(x, who, sizeof(who), err, sizeof(err));
			if (x_end < 0 && !election_leading(x))
				x_end = now_ms() - t_stop;
			if (election_step(y, who, sizeof(who), err, sizeof(err)) == 1) {
				y_win = now_ms() - t_stop;
				/* the moment y may act: x must have stopped */
				x_still = election_leading(x);
			}
			sleep_ms(100);
		}
		kill(cluster_member[1], SIGCONT);
		printf("# leader smo-x cut off from etcd: seen stopped by %" PRId64
		       " ms, smo-y led at %" PRId64 " ms, smo-x still acting then: %s\n",
		       x_end, y_win, x_still ? "yes" : "no");
		ok = ok && y_win >= 0 && !x_still;
		ktap_check(ok, "a leader cut off from etcd stops acting before another starts");
		if (y) {
			election_resign(y);
			election_close(y);
		}
		election_close(x);
	}
	/* b takes the empty seat again for what follows */
	for (k = 0; k < 10 && election_step(b, who, sizeof(who), err, sizeof(err)) != 1; k++)
		sleep_ms(TTL_S * 1000 / 3);

	/*
	 * A step may fail to reach etcd in time (-1) on a loaded machine;
	 * what must never happen is another answer: b told it follows, or
	 * c told it leads.
	 */
	c = election_open(cluster_endpoints, KEY, "smo-c", TTL_S, err, sizeof(err));
	ok = c && step_definite(c) == 0 && !strcmp(who, "smo-b");
	cluster_kill(0);
	{
		int led = 0, rb, rc2;

		for (k = 0; ok && k < 6; k++) {
			sleep_ms(TTL_S * 1000 / 3);
			rb = election_step(b, who, sizeof(who), err, sizeof(err));
			rc2 = election_step(c, who, sizeof(who), err, sizeof(err));
			ok = rb != 0 && rc2 != 1;
			led += rb == 1;
		}
		ok = ok && led >= 4;
		printf("# with member 0 killed: smo-b confirmed its seat at %d of 6 steps\n", led);
	}
	ktap_check(ok, "with an etcd member killed, the leader keeps its seat and the other follows");

	election_resign(b);
	ok = step_definite(c) == 1 && !strcmp(who, "smo-c") &&
	     step_definite(b) == 0 && !strcmp(who, "smo-c");
	ktap_check(ok, "a leader that resigns hands over at once");

	/*
	 * election_put: only the seat's holder writes, compared on the seat's
	 * value and lease in the writing transaction. The seat deleted by
	 * hand and won by another process of the same name: the old one,
	 * which has not stepped since and still thinks it leads, cannot write.
	 */
	{
		struct json_object *q = json_object_new_object(), *resp, *kvs, *v;
		struct election *c2 = NULL;
		struct etcd *e = etcd_open(cluster_endpoints, err, sizeof(err));
		int64_t r1 = 0, r2 = 0, r3 = -1;
		char val[32] = "";

		ok = election_put(c, PKEY, "set-c", &r1, err, sizeof(err)) == 1 && r1 > 0 &&
		     election_put(b, PKEY, "set-b", &r3, err, sizeof(err)) == 0;
		ktap_check(ok, "election_put: the leader writes the set, a follower cannot");
		json_object_object_add(q, "key", etcd_b64(KEY, strlen(KEY)));
		ok = e && !etcd_call(e, "/v3/kv/deleterange", q, &resp, err, sizeof(err));
		if (ok)
			json_object_put(resp);
		c2 = election_open(cluster_endpoints, KEY, "smo-c", TTL_S, err, sizeof(err));
		ok = ok && c2 && step_definite(c2) == 1 && election_leading(c);
		ok = ok && election_put(c, PKEY, "stale", &r3, err, sizeof(err)) == 0 &&
		     election_put(c2, PKEY, "set-c2", &r2, err, sizeof(err)) == 1 && r2 > r1;
		json_object_object_add(q, "key", etcd_b64(PKEY, strlen(PKEY)));
		if (ok && !etcd_call(e, "/v3/kv/range", q, &resp, err, sizeof(err))) {
			if (json_object_object_get_ex(resp, "kvs", &kvs) &&
			    json_object_object_get_ex(json_object_array_get_idx(kvs, 0),
						      "value", &v))
				etcd_unb64(json_object_get_string(v), val, sizeof(val));
			json_object_put(resp);
		}
		printf("# election_put: set-c at revision %" PRId64 ", set-c2 at %" PRId64
		       "; the set holds \"%s\"\n", r1, r2, val);
		ktap_check(ok && !strcmp(val, "set-c2"),
			   "election_put: a deposed leader (its lease no longer the seat's) cannot write; the new one writes at a higher revision");
		json_object_put(q);
		etcd_close(e);
		if (c2) {
			election_resign(c2);
			election_close(c2);
		}
	}

	ok = !election_open(cluster_endpoints, KEY, "smo-d", 1, err, sizeof(err)) &&
	     strstr(err, "ttl 1 s");
	ktap_check(ok, "a lease under etcd's 2 s is refused");

	/*
	 * A race for an empty seat: six candidates released at once, each
	 * steps once. Exactly one may win; the seat's transaction decides.
	 */
	election_resign(c);
	{
		int go[2], res[2], won = 0, n = 0;
		char node[24], r;
		pid_t kids[6];

		if (pipe(go) || pipe(res))
			return 1;
		fflush(stdout);
		for (k = 0; k < 6; k++) {
			kids[k] = fork();
			if (kids[k] == 0) {
				struct election *x;

				snprintf(node, sizeof(node), "smo-r%d", k);
				x = election_open(cluster_endpoints, KEY, node, TTL_S,
						  err, sizeof(err));
				close(go[1]);
				if (!x || read(go[0], &r, 1) != 0)
					_exit(1);
				/* a step that could not reach etcd is no answer: again */
				for (rc = -1, t = 0; rc < 0 && t < 30; t++) {
					rc = election_step(x, who, sizeof(who), err, sizeof(err));
					if (rc < 0)
						sleep_ms(100);
				}
				r = '0' + rc;
				if (write(res[1], &r, 1) != 1)
					_exit(1);
				sleep_ms(3000);	/* hold the seat while the others look */
				_exit(0);
			}
		}
		close(go[0]);
		close(res[1]);
		sleep_ms(300);
		close(go[1]);	/* EOF: all go */
		while (read(res[0], &r, 1) == 1) {
			n++;
			won += r == '1';
		}
		for (k = 0; k < 6; k++)
			waitpid(kids[k], NULL, 0);
		close(res[0]);
		printf("# race for an empty seat: %d of %d candidates won\n", won, n);
		ktap_check(n == 6 && won == 1, "six candidates racing for an empty seat: exactly one wins");
	}

	election_close(b);
	election_close(c);
	close(p[0]);
	cluster_down();
	return ktap_finish();
}
