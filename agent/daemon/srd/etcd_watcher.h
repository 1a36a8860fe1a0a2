/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A standing etcd watch on a key range, in a thread of its own: etcd
 * pushes each change as it is committed, and the watcher calls a wake-up
 * function for it. The SRD's event loop does not block on etcd; it is
 * woken (through a pipe) and reads the changes with the store's
 * changes(). This is how a change made through another SRD on the same
 * cluster reaches this SRD's SRs at once, not at the next full table.
 *
 * The thread has its own connection (libcurl handles are not shared
 * between threads) and re-opens the watch every second from the last
 * revision it saw, so nothing is missed between two streams and a stop
 * takes at most a second. A member that does not answer is retried, the
 * next endpoint first (etcd.c).
 */
#ifndef DMSC_SRD_ETCD_WATCHER_H
#define DMSC_SRD_ETCD_WATCHER_H

#include <stddef.h>
#include <stdint.h>

struct etcd_watcher;

/*
 * Watch [@key, @range_end) on @endpoints from revision @from + 1; call
 * @wake(@arg) from the watcher's thread after each batch of events that
 * holds a key other than @skip (the store's own marker, which every
 * catch-up writes: waking for it would loop). @wake must be safe in any
 * thread (e.g. a write to a pipe). NULL with the reason in @err.
 */
struct etcd_watcher *etcd_watcher_start(const char *endpoints, const char *key,
					const char *range_end, const char *skip,
					uint64_t from, void (*wake)(void *arg),
					void *arg, char *err, size_t errlen);
/* Stop the thread (within about a second) and free everything. */
void etcd_watcher_stop(struct etcd_watcher *w);
/* Revision of the last event seen, and watches that failed (a member down). */
uint64_t etcd_watcher_revision(struct etcd_watcher *w);
uint64_t etcd_watcher_errors(struct etcd_watcher *w);

#endif /* DMSC_SRD_ETCD_WATCHER_H */
