/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Leases of registered instances, in memory: a heartbeat renews one in
 * O(1), thousands a second, with no disk write (registry.h says why that
 * is safe). An open-addressing hash table keyed by instance id.
 */
#ifndef DMSC_SRD_LEASE_H
#define DMSC_SRD_LEASE_H

#include <stddef.h>
#include <stdint.h>

#include "registry.h"

struct lease {
	char id[SRD_ID_MAX];
	int64_t expires_ms;
	uint32_t ttl_ms;
	uint8_t state;		/* LEASE_FREE, LEASE_USED, LEASE_GONE */
	int64_t handle;		/* the store's id of it (etcd's lease ID) */
};

struct lease_table {
	struct lease *slot;
	size_t cap;		/* a power of two, or 0 */
	size_t used;		/* live leases */
	size_t filled;		/* live and deleted slots: probes stop at free */
};

/* Grant or replace the lease of @id. -1 if out of memory. */
int lease_put(struct lease_table *t, const char *id, int64_t expires_ms,
	      uint32_t ttl_ms);
/* Extend @id's lease to @now_ms + its ttl. -1 if @id has no lease. */
int lease_renew(struct lease_table *t, const char *id, int64_t now_ms);
void lease_del(struct lease_table *t, const char *id);
/* Note the store's own id of @id's lease. -1 if @id has no lease. */
int lease_set_handle(struct lease_table *t, const char *id, int64_t handle);
/* The lease of @id, or NULL. */
const struct lease *lease_get(const struct lease_table *t, const char *id);
/*
 * The ids whose lease ran out by @now_ms, oldest first, in a malloc()ed
 * array *@ids of *@n (NULL and 0 if none). Their leases stay until
 * deleted. -1 if out of memory.
 */
int lease_expired(const struct lease_table *t, int64_t now_ms,
		  char (**ids)[SRD_ID_MAX], size_t *n);
void lease_free(struct lease_table *t);

#endif /* DMSC_SRD_LEASE_H */
