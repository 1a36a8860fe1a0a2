/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The SMO leader's whole set, relayed through etcd to the SMO of every
 * controller (smo_relay.c): an SR talks to one controller at a time, and
 * the leader's srd is not necessarily its controller.
 *
 * The leader writes its set to one key (smo.policies_key) with
 * election_put(), which succeeds only while the seat is its own. Every
 * SMO, the leader too, follows that key with a standing watch (a thread
 * of etcd_watcher.c), reads it in a thread of its own (a member that
 * does not answer holds that thread up to a second, not the loop), and
 * pushes it, on the loop woken through a pipe, to the SRs connected to
 * its srd. The key's mod_revision is the set's term: it grows with every
 * write by any leader, so an SR can order what two controllers relay to
 * it. etcd's cluster_id, read with it, is the term's epoch: a restore
 * from a snapshot makes a new cluster (whose revisions went back), and
 * a set of another epoch is newer whatever its term.
 */
#ifndef DMSC_SMO_RELAY_H
#define DMSC_SMO_RELAY_H

#include <stdbool.h>
#include <stdint.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "msg_policy.h"

/* The set as etcd holds it: { "leader", "seat", "rev", "policies" } */
struct smo_set {
	uint64_t term;		/* the key's mod_revision; 0: no set */
	uint64_t epoch;		/* etcd's cluster_id when it was read; 0: unknown */
	uint64_t seat;		/* the revision at which its leader took the seat */
	uint64_t rev;		/* the leader's revision of it */
	char leader[MSG_NODE_MAX];
	struct policy *p;	/* all nodes' */
	size_t n;
};

/*
 * Called on the loop when a newer set is taken. @full: it is not the
 * next revision of the same leadership (a new leader, a restart, a
 * revision skipped), so the SRs must take it whole.
 */
typedef void (*smo_relay_fn)(void *arg, bool full);

struct smo_relay;

/* Read @key once, then follow it. NULL with @err. */
struct smo_relay *smo_relay_start(struct event_base *base,
				  const char *endpoints, const char *key,
				  smo_relay_fn changed, void *arg, char *err,
				  size_t errlen);
void smo_relay_stop(struct smo_relay *rl);

/* The set etcd held at the last read or write, or NULL if none. */
const struct smo_set *smo_relay_set(const struct smo_relay *rl);

/* The value the leader writes: a malloc()ed JSON text, or NULL. */
char *smo_relay_value(const char *leader, uint64_t seat, uint64_t rev,
		      const struct policy *p, size_t n);
/* Our own write of @value, at etcd revision @term of cluster @epoch: as if read. */
void smo_relay_take(struct smo_relay *rl, uint64_t term, uint64_t epoch,
		    const char *value);

/* For dmsc agent show policies: the set's term, leader, counters. */
struct json_object *smo_relay_show(const struct smo_relay *rl);

#endif /* DMSC_SMO_RELAY_H */
