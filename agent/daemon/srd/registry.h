/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The service registry of the SRD role (draft-yang-dmsc-distributed-model-04,
 * signalling types 1 and 2): microservice instances (MIs) with leases, and a
 * revision number that every change raises, so that an SR applies each
 * change once and notices a gap.
 *
 * The registry sits on a store. Two implement struct srd_store_ops: SQLite
 * (store_sqlite.c, the embedded default, no server) and etcd
 * (store_etcd.c, for several controllers sharing one registry). They keep
 * the same contract, which tests/test_registry.c checks on SQLite and
 * tests/test_etcd.c on a three-member etcd cluster (store_etcd.c says
 * where etcd's nature makes it differ):
 *
 *  - put() registers or replaces an instance and grants it a lease of
 *    @ttl_ms; renew() extends the lease; an instance whose lease ran out
 *    is removed by expire(), as a change like any other;
 *  - every put, delete and expiry is one revision, durable when the call
 *    returns (SQLite: WAL with synchronous=FULL, one transaction);
 *  - changes(since) gives every change after revision @since in order, or
 *    SRD_GAP if the log no longer reaches back that far: the SR must then
 *    take a full list() (anti-entropy), which carries its revision;
 *  - renewals are not durable, as in etcd: after a restart of the SRD each
 *    instance gets a full new lease from the time of the restart, so a
 *    restart never expires a live instance and a dead one is expired one
 *    lease later.
 */
#ifndef DMSC_SRD_REGISTRY_H
#define DMSC_SRD_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#define SRD_ID_MAX	64	/* instance id, with the NUL */
#define SRD_NODE_MAX	64	/* node name, with the NUL */
#define SRD_ADDR_MAX	48	/* IPv6 text, with the NUL */
#define SRD_PREFIX_MAX	52	/* IPv6 prefix "addr/len", with the NUL */
#define SRD_RTYPE_MAX	32	/* resource type, with the NUL */
#define SRD_TTL_MIN_MS	100
#define SRD_TTL_MAX_MS	3600000

/* Returned by changes() when @since is older than the log keeps. */
#define SRD_GAP		1

enum srd_state {
	SRD_PENDING,	/* registered, not yet serving */
	SRD_ACTIVE,	/* serving: its routes are advertised */
	SRD_FAULTED,	/* reported faulty: routes withdrawn, kept registered */
};

struct srd_instance {
	char id[SRD_ID_MAX];		/* unique, chosen by the MI */
	char node[SRD_NODE_MAX];	/* the node it runs on */
	char sid[SRD_ADDR_MAX];		/* its SRv6 SID */
	char prefix[SRD_PREFIX_MAX];	/* the service prefix it serves */
	char rtype[SRD_RTYPE_MAX];	/* resource type: "gpu", "cpu", ... */
	uint32_t capability;		/* compute capability, e.g. TFLOPS */
	enum srd_state state;
	uint32_t ttl_ms;		/* lease length */
	/* kept by the store: */
	int64_t expires_ms;		/* when the lease runs out */
	uint64_t mod_rev;		/* revision of the last put */
};

enum srd_op { SRD_OP_PUT, SRD_OP_DEL, SRD_OP_EXPIRE };

struct srd_change {
	uint64_t rev;
	enum srd_op op;
	struct srd_instance inst;	/* for DEL and EXPIRE: id and node only */
};

typedef int (*srd_change_fn)(const struct srd_change *c, void *arg);
typedef int (*srd_inst_fn)(const struct srd_instance *i, void *arg);

struct srd_store;

struct srd_store_ops {
	const char *name;
	/* All return 0, or -1 with the reason in @err. */
	int (*put)(struct srd_store *s, const struct srd_instance *i,
		   int64_t now_ms, uint64_t *rev, char *err, size_t errlen);
	/*
	 * Renew or delete @id for @node, the node that asks (from its
	 * certificate): refused if @id is registered on another node. NULL
	 * is the SRD itself or its operator, who may touch any instance.
	 * -1 "no instance ID" if it is not registered (expired, deleted).
	 */
	int (*renew)(struct srd_store *s, const char *id, const char *node,
		     int64_t now_ms, char *err, size_t errlen);
	int (*del)(struct srd_store *s, const char *id, const char *node,
		   uint64_t *rev, char *err, size_t errlen);
	/* Remove what expired by @now_ms, calling @fn for each change. */
	int (*expire)(struct srd_store *s, int64_t now_ms, srd_change_fn fn,
		      void *arg, char *err, size_t errlen);
	/* Every instance, and the revision the list is as of. */
	int (*list)(struct srd_store *s, srd_inst_fn fn, void *arg,
		    uint64_t *rev, char *err, size_t errlen);
	/* Changes after @since, in order; SRD_GAP if the log does not reach. */
	int (*changes)(struct srd_store *s, uint64_t since, srd_change_fn fn,
		       void *arg, char *err, size_t errlen);
	uint64_t (*revision)(struct srd_store *s);
	/*
	 * Optional (NULL when only this SRD writes the store, as SQLite's
	 * lock makes sure): call @wake(@arg), from another thread, whenever
	 * the store changed after revision() by any hand, so that changes()
	 * can be read at once. @wake must be safe in any thread (a write to
	 * a pipe). It stops with close().
	 */
	int (*watch)(struct srd_store *s, void (*wake)(void *arg), void *arg,
		     char *err, size_t errlen);
	/*
	 * Optional: a consistent copy of the store, made while the SRD runs
	 * (SQLite's lock keeps every other process out of the file), in a
	 * new file @name (a name, no '/') of the store's own directory,
	 * whose path goes into @path. NULL where the store has its own tool
	 * (etcd: etcdctl snapshot save).
	 */
	int (*backup)(struct srd_store *s, const char *name, char *path,
		      size_t pathlen, char *err, size_t errlen);
	void (*close)(struct srd_store *s);
};

struct srd_store {
	const struct srd_store_ops *ops;
};

/*
 * Open (creating if needed) the SQLite store at @path, keeping the last
 * @log_keep changes for changes(). Leases of what it holds restart at
 * @now_ms. NULL with the reason in @err; a store another SRD has open is
 * refused ("in use by another process"), since two SRDs would each keep
 * their own leases.
 */
struct srd_store *srd_store_sqlite_open(const char *path, uint64_t log_keep,
					int64_t now_ms, char *err,
					size_t errlen);

/*
 * Open the registry kept in an etcd cluster at @endpoints (comma-separated
 * URLs of its members) under key @prefix (NULL: "/dmsc/srd/"). Several
 * SRDs may share it. NULL with the reason in @err if no member answers.
 */
struct srd_store *srd_store_etcd_open(const char *endpoints, const char *prefix,
				      int64_t now_ms, char *err, size_t errlen);

/* Check an instance before it is stored: the field is named in @err. */
int srd_instance_check(const struct srd_instance *i, char *err,
		       size_t errlen);

/* The error of a request by @node for @id, which @owner registered. */
int srd_not_owner(const char *id, const char *owner, const char *node,
		  char *err, size_t errlen);

const char *srd_state_name(enum srd_state s);
struct json_object;
struct json_object *srd_instance_json(const struct srd_instance *i);
/* -1 if @name is none of "pending", "active", "faulted" */
int srd_state_parse(const char *name);

#endif /* DMSC_SRD_REGISTRY_H */
