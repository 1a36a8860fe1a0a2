/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The revoked jtis shared through etcd by the AAMs of several controllers
 * on one cluster (aam.revoked_prefix, with srd.store.etcd): one key per
 * jti, PREFIX + jti, its value {"jti", "exp", "by"} on an etcd lease that
 * runs out at exp + grace, so etcd forgets it when no verifier would take
 * the token any more. Every AAM writes the jtis it holds and etcd lacks,
 * and takes those etcd holds: the list is the union of all, not a
 * leader's.
 *
 * Nothing here blocks the loop: a worker thread, with its own etcd
 * connection, does the writes and the reads (the whole prefix, after each
 * change the watcher thread sees, and again every second while etcd fails);
 * a read's result comes back to the loop through a pipe, as the set etcd
 * holds, to aam_shared_fn.
 */
#ifndef DMSC_AAM_SHARED_H
#define DMSC_AAM_SHARED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "msg_auth.h"

struct aam_shared;

/* On the loop: the jtis etcd holds under the prefix, after a read. */
typedef void (*aam_shared_fn)(void *arg, const struct auth_revoked *v,
			      size_t n);

/*
 * Share through @endpoints under @prefix, as @node; each jti is kept
 * until its exp + @grace_s. NULL with the reason in @err.
 */
struct aam_shared *aam_shared_start(struct event_base *base,
				    const char *endpoints, const char *prefix,
				    const char *node, int64_t grace_s,
				    aam_shared_fn fn, void *arg, char *err,
				    size_t errlen);
void aam_shared_stop(struct aam_shared *s);
/* Write @v to etcd (queued; once per jti until written). */
void aam_shared_put(struct aam_shared *s, const struct auth_revoked *v);
/* Jtis queued or being written, not yet known to be in etcd. */
size_t aam_shared_pending(struct aam_shared *s);
/* The prefix, the counters and the last error, for show aam. */
void aam_shared_show(struct aam_shared *s, struct json_object *o);

#endif /* DMSC_AAM_SHARED_H */
