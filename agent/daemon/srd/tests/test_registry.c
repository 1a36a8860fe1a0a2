// SPDX-License-Identifier: GPL-2.0
/*
 * The registry store's contract (registry.h), checked on a real SQLite
 * file: revisions, leases and their expiry within three heartbeats, the
 * change log and its gap, durability across a clean close and across a
 * process killed mid-stream, exclusion of a second SRD, bad input. The
 * suite talks to the store only through struct srd_store_ops, so that the
 * etcd store runs it too.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "registry.h"
#include "instance_fixture.h"
#include "../../../tests/ktap.h"

#define T0	1764000000000ll

static char dir[] = "/tmp/dmsc-srd.XXXXXX", path[128], err[256];

static struct srd_store *open_store(uint64_t keep, int64_t now)
{
	struct srd_store *s = srd_store_sqlite_open(path, keep, now, err,
						    sizeof(err));

	if (!s)
		printf("# open: %s\n", err);
	return s;
}

struct seen {
	int n;
	char ids[64][SRD_ID_MAX];
	uint64_t revs[64];
	int ops[64];
	struct srd_instance last;
};

static int see_inst(const struct srd_instance *i, void *arg)
{
	struct seen *s = arg;

	if (s->n < 64)
		snprintf(s->ids[s->n], SRD_ID_MAX, "%s", i->id);
	s->last = *i;
	s->n++;
	return 0;
}

static int see_change(const struct srd_change *c, void *arg)
{
	struct seen *s = arg;

	if (s->n < 64) {
		snprintf(s->ids[s->n], SRD_ID_MAX, "%s", c->inst.id);
		s->revs[s->n] = c->rev;
		s->ops[s->n] = c->op;
	}
	s->last = c->inst;
	s->n++;
	return 0;
}

static int put(struct srd_store *s, const char *id, const char *node, int n,
	       int64_t now)
{
	struct srd_instance i;

	mi(&i, id, node, n);
	return s->ops->put(s, &i, now, NULL, err, sizeof(err));
}

/* Does putting @i fail with an error that contains @want? */
static int refused(struct srd_store *s, const struct srd_instance *i,
		   const char *want)
{
	if (!s->ops->put(s, i, T0, NULL, err, sizeof(err)))
		return 0;
	if (strstr(err, want))
		return 1;
	printf("# \"%s\" lacks \"%s\"\n", err, want);
	return 0;
}

/* A child that registers instances and reports each revision on @fd. */
static void writer(int fd)
{
	struct srd_store *s = open_store(1000, T0);
	char id[32];
	uint64_t rev;
	struct srd_instance i;
	int k;

	if (!s)
		_exit(1);
	for (k = 0; ; k++) {
		snprintf(id, sizeof(id), "crash-%d", k);
		mi(&i, id, "pe9", k);
		if (s->ops->put(s, &i, T0, &rev, err, sizeof(err)))
			_exit(2);
		if (write(fd, &rev, sizeof(rev)) != sizeof(rev))
			_exit(3);
	}
}

int main(void)
{
	struct srd_store *s;
	struct srd_instance i;
	struct seen sn;
	uint64_t rev, last_rev = 0;
	int64_t t;
	int ok, k, p[2], st;
	pid_t pid;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/registry.db", dir);
	ktap_plan(14);

	s = open_store(5, T0);
	memset(&sn, 0, sizeof(sn));
	ok = s && s->ops->revision(s) == 0 &&
	     !s->ops->list(s, see_inst, &sn, &rev, err, sizeof(err)) &&
	     sn.n == 0 && rev == 0;
	ktap_check(ok, "a new store is empty at revision 0");
	if (!s)
		return ktap_finish();

	ok = !put(s, "mi-a", "pe1", 1, T0) && !put(s, "mi-b", "pe1", 2, T0) &&
	     !put(s, "mi-c", "pe2", 3, T0) && s->ops->revision(s) == 3;
	memset(&sn, 0, sizeof(sn));
	ok = ok && !s->ops->list(s, see_inst, &sn, &rev, err, sizeof(err)) &&
	     sn.n == 3 && rev == 3 && !strcmp(sn.ids[2], "mi-c") &&
	     sn.last.mod_rev == 3 && sn.last.expires_ms == T0 + 3000 &&
	     !strcmp(sn.last.prefix, "2001:db8:3::/48") && sn.last.capability == 315 &&
	     sn.last.state == SRD_ACTIVE;
	ktap_check(ok, "three registrations: revisions 1-3, listed with their lease and fields");

	mi(&i, "mi-a", "pe7", 1);
	ok = refused(s, &i, "id: mi-a is registered on node pe1") &&
	     s->ops->renew(s, "mi-a", "pe7", T0, err, sizeof(err)) &&
	     strstr(err, "registered on node pe1, not pe7") &&
	     s->ops->del(s, "mi-a", "pe7", NULL, err, sizeof(err)) &&
	     strstr(err, "registered on node pe1, not pe7") &&
	     s->ops->revision(s) == 3;
	ktap_check(ok, "another node can neither take, renew nor delete an id registered on one node");

	ok = 1;
	mi(&i, "bad id", "pe1", 1);
	ok &= refused(s, &i, "id:");
	mi(&i, "mi-x", "PE1", 1);
	ok &= refused(s, &i, "node:");
	mi(&i, "mi-x", "pe1", 1);
	strcpy(i.sid, "10.0.0.1");
	ok &= refused(s, &i, "sid:");
	mi(&i, "mi-x", "pe1", 1);
	strcpy(i.prefix, "2001:db8::/129");
	ok &= refused(s, &i, "prefix:");
	mi(&i, "mi-x", "pe1", 1);
	i.ttl_ms = 10;
	ok &= refused(s, &i, "ttl_ms:");
	mi(&i, "mi-x", "pe1", 1);
	i.state = 7;
	ok &= refused(s, &i, "state:");
	ktap_check(ok && s->ops->revision(s) == 3,
		   "bad instances are refused naming the field, nothing stored");

	/*
	 * Heartbeats every 1000 ms, lease 3000 ms: a and b keep beating, c
	 * falls silent after T0. It must be gone once 3 heartbeats passed
	 * without a renewal, not before.
	 */
	ok = 1;
	memset(&sn, 0, sizeof(sn));
	for (t = T0 + 1000; t <= T0 + 4000; t += 1000) {
		ok &= !s->ops->renew(s, "mi-a", "pe1", t, err, sizeof(err));
		ok &= !s->ops->renew(s, "mi-b", "pe1", t, err, sizeof(err));
		ok &= !s->ops->expire(s, t - 1, see_change, &sn, err, sizeof(err));
		if (t - 1 < T0 + 3000)
			ok &= sn.n == 0;
	}
	ok = ok && sn.n == 1 && !strcmp(sn.ids[0], "mi-c") &&
	     sn.ops[0] == SRD_OP_EXPIRE && sn.revs[0] == 4 &&
	     !strcmp(sn.last.node, "pe2") && s->ops->revision(s) == 4;
	ktap_check(ok, "a silent instance expires within 3 heartbeats, a renewed one does not");

	ok = s->ops->renew(s, "mi-c", "pe2", T0 + 5000, err, sizeof(err)) &&
	     strstr(err, "no instance mi-c");
	ktap_check(ok, "renewing an expired instance fails: it must register again");

	ok = !s->ops->del(s, "mi-b", NULL, &rev, err, sizeof(err)) && rev == 5 &&
	     s->ops->del(s, "mi-b", NULL, NULL, err, sizeof(err)) && strstr(err, "no instance");
	memset(&sn, 0, sizeof(sn));
	ok = ok && !s->ops->expire(s, T0 + 100000, see_change, &sn, err, sizeof(err)) &&
	     sn.n == 1 && !strcmp(sn.ids[0], "mi-a") && s->ops->revision(s) == 6;
	ktap_check(ok, "delete is a change, and a deleted instance's lease is gone with it");

	memset(&sn, 0, sizeof(sn));
	ok = s->ops->changes(s, 1, see_change, &sn, err, sizeof(err)) == 0 &&
	     sn.n == 5 && sn.revs[0] == 2 && sn.revs[4] == 6 &&
	     sn.ops[0] == SRD_OP_PUT && sn.ops[2] == SRD_OP_EXPIRE &&
	     sn.ops[3] == SRD_OP_DEL && sn.ops[4] == SRD_OP_EXPIRE &&
	     !strcmp(sn.ids[3], "mi-b");
	memset(&sn, 0, sizeof(sn));
	ok = ok && s->ops->changes(s, 6, see_change, &sn, err, sizeof(err)) == 0 && sn.n == 0;
	ok = ok && s->ops->changes(s, 7, see_change, &sn, err, sizeof(err)) == -1 &&
	     strstr(err, "ahead");
	ktap_check(ok, "changes since a revision come in order; none after the last; a future one is an error");

	/* the log keeps 5: after 6 revisions, "since 0" no longer reaches */
	ok = s->ops->changes(s, 0, see_change, &sn, err, sizeof(err)) == SRD_GAP;
	memset(&sn, 0, sizeof(sn));
	ok = ok && s->ops->changes(s, 1, see_change, &sn, err, sizeof(err)) == 0 &&
	     sn.n == 5;
	ktap_check(ok, "a revision older than the log is SRD_GAP (take a full list), the log's start is not");

	ok = !put(s, "mi-d", "pe3", 4, T0 + 200000) && s->ops->revision(s) == 7;
	s->ops->close(s);
	s = open_store(5, T0 + 900000);
	memset(&sn, 0, sizeof(sn));
	ok = ok && s && s->ops->revision(s) == 7 &&
	     !s->ops->list(s, see_inst, &sn, &rev, err, sizeof(err)) && sn.n == 1 &&
	     rev == 7 && !strcmp(sn.last.id, "mi-d") &&
	     sn.last.expires_ms == T0 + 900000 + 3000;
	memset(&sn, 0, sizeof(sn));
	ok = ok && s->ops->changes(s, 1, see_change, &sn, err, sizeof(err)) == SRD_GAP &&
	     s->ops->changes(s, 2, see_change, &sn, err, sizeof(err)) == 0 && sn.n == 5;
	ktap_check(ok, "reopened: same instances and revision, the log and its cut, leases restart from the open");
	if (!s)
		return ktap_finish();

	/* a second SRD on the same file is refused, from another process */
	pid = fork();
	if (pid == 0) {
		struct srd_store *o = srd_store_sqlite_open(path, 5, T0, err, sizeof(err));

		_exit(!o && strstr(err, "in use by another process") ? 0 : 1);
	}
	ok = waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	ktap_check(ok, "a second SRD cannot open a store in use (\"in use by another process\")");
	s->ops->close(s);

	/*
	 * Durability: a writer killed with SIGKILL mid-stream. Every
	 * revision it was told was done must be in the file.
	 */
	if (pipe(p))
		return 1;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		writer(p[1]);
	}
	close(p[1]);
	for (k = 0; k < 40; k++)
		if (read(p[0], &rev, sizeof(rev)) == sizeof(rev))
			last_rev = rev;
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	while (read(p[0], &rev, sizeof(rev)) == sizeof(rev))
		last_rev = rev;
	close(p[0]);
	s = open_store(1000, T0);
	memset(&sn, 0, sizeof(sn));
	ok = s && last_rev >= 7 + 40 && s->ops->revision(s) >= last_rev &&
	     !s->ops->list(s, see_inst, &sn, &rev, err, sizeof(err)) &&
	     sn.n >= (int)(last_rev - 7) + 1;
	printf("# killed writer: last acknowledged revision %" PRIu64 ", reopened at %" PRIu64
	       ", %d instances\n", last_rev, s ? s->ops->revision(s) : 0, sn.n);
	ktap_check(ok, "every acknowledged change survives SIGKILL of the writer");
	if (!s)
		return ktap_finish();

	/*
	 * Figures: durable registrations per second (one fsync each) and
	 * renewals per second, with 1,000 instances. A heartbeat every
	 * second from 10,000 instances is 10,000 renewals a second.
	 */
	{
		struct timespec a, b, c;
		char id[32];
		double put_s, renew_s;
		int n = 1000;

		s->ops->close(s);
		unlink(path);
		s = open_store(100000, T0);
		ok = s != NULL;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (k = 0; ok && k < n; k++) {
			snprintf(id, sizeof(id), "mi-%d", k);
			ok = !put(s, id, "pe1", k, T0);
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		for (k = 0; ok && k < 10 * n; k++) {
			snprintf(id, sizeof(id), "mi-%d", k % n);
			ok = !s->ops->renew(s, id, "pe1", T0 + 1 + k / n, err, sizeof(err));
		}
		clock_gettime(CLOCK_MONOTONIC, &c);
		put_s = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
		renew_s = (c.tv_sec - b.tv_sec) + (c.tv_nsec - b.tv_nsec) / 1e9;
		printf("# %d durable registrations in %.2f s (%.0f/s); %d renewals in %.3f s (%.0f/s)\n",
		       n, put_s, n / put_s, 10 * n, renew_s, 10 * n / renew_s);
		ktap_check(ok && s->ops->revision(s) == (uint64_t)n && 10 * n / renew_s > 10000,
			   "1,000 registrations; renewals faster than 10,000 a second");
		if (s)
			s->ops->close(s);
	}

	/* a file that is not a registry */
	{
		int fd;

		snprintf(path, sizeof(path), "%s/not-a-db", dir);
		fd = open(path, O_CREAT | O_WRONLY, 0600);
		ok = fd >= 0 && write(fd, "hello, world, this is not sqlite\n", 33) == 33;
		close(fd);
		s = srd_store_sqlite_open(path, 5, T0, err, sizeof(err));
		ok = ok && !s && strstr(err, "not-a-db");
		if (!ok)
			printf("# %s\n", err);
		ktap_check(ok, "a file that is not a registry is refused, naming it");
		if (s)
			s->ops->close(s);
	}

	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path))
		return 1;
	return ktap_finish();
}
