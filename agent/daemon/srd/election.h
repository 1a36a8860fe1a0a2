/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Leader election through an etcd lease, for the SMO role: where several
 * SMOs share one etcd, exactly one acts, and another takes over within
 * two lease lengths when it dies.
 *
 * The leader is whoever holds key K (value: its node name), written only
 * if K is absent and attached to the writer's lease. The leader keeps the
 * lease alive; when it dies, etcd expires the lease and deletes K, and
 * the next candidate to look writes it. Everyone calls election_step()
 * every third of the lease: a leader learns in time that it lost the
 * lease (and must stop acting), a follower notices the vacancy within a
 * third of a lease after etcd's expiry, so a takeover takes at most
 * about 1 1/3 leases plus etcd's 0.5 s expiry check.
 *
 * A leader may act only until its lease could have expired: the time it
 * sent its last successful keep-alive plus the lease granted, less a
 * tenth. election_leading() says whether that moment has passed, whether
 * or not a step has returned since: the SMO asks it before each action.
 * Each etcd call of the election is bounded by a quarter of the lease, so
 * a leader cut off from etcd does not wait past its own deadline.
 *
 * Threads: election_step(), election_put() and election_resign() block
 * on etcd and are made by one thread at a time (the SMO's is its own,
 * smo/smo_elect.h, not the agent's loop); election_leading() and
 * election_seat_revision() read atomics and may be called from any
 * thread at any time, even while a step is stuck in a call.
 */
#ifndef DMSC_SRD_ELECTION_H
#define DMSC_SRD_ELECTION_H

#include <stddef.h>
#include <stdint.h>

struct election;

/* @ttl_s: the lease, at least 2 (etcd's minimum). NULL with @err. */
struct election *election_open(const char *endpoints, const char *key,
			       const char *node, int ttl_s, char *err,
			       size_t errlen);
/*
 * Hold or campaign. 1: we lead. 0: someone else does, named in @leader
 * ("" if the seat is empty and our campaign lost a race). -1: etcd could
 * not be asked, with @err; a leader must then stop acting.
 */
int election_step(struct election *el, char *leader, size_t size, char *err,
		  size_t errlen);
/* May we act now? 1 until our lease could have run out, then 0. Any thread. */
int election_leading(const struct election *el);

/*
 * The etcd revision at which we took the seat, while we hold it (else
 * 0): it changes with every leadership, even of the same node. Any thread.
 */
int64_t election_seat_revision(const struct election *el);
/*
 * The cluster_id in etcd's last answer to a step or a write (0: none
 * yet): `etcdctl snapshot restore` makes a new one, so it tells a
 * restored etcd (whose revisions went back) from the one before.
 */
uint64_t election_cluster(const struct election *el);
/*
 * Put @value at @key in one etcd transaction that succeeds only while
 * the seat holds our name under our lease: 1 and the write's revision
 * in *@rev; 0 if the seat is not ours (a deposed leader); -1 if etcd
 * could not be asked (it may have been applied). @err says why not.
 */
int election_put(struct election *el, const char *key, const char *value,
		 int64_t *rev, char *err, size_t errlen);

/* Step down now (delete K if it is ours, revoke our lease). */
void election_resign(struct election *el);
void election_close(struct election *el);

#endif /* DMSC_SRD_ELECTION_H */
