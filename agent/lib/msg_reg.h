/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types 1 and 2 of draft-yang-dmsc-distributed-model-04 (msg.h): an SR
 * registers the microservice instances (MIs) of its node with the SRD
 * (type 1, instance registration), and the SRD tells every SR what is
 * registered (type 2, route advertisement). Documentation/registry.md
 * has the schema with examples.
 *
 * Type 1, SR to SRD, "op" one of
 *   register    "instance": { "id", "node", "sid", "prefix", "rtype",
 *                             "capability", "state", "ttl_ms" }
 *   renew       "id"        (a heartbeat: the lease starts again)
 *   deregister  "id"
 *   sync        "since"     (the SR's revision: send me the full table)
 *   digest      "rev", "sha256"  (anti-entropy: the SR's revision and the
 *                             digest of its table, msg_routes_digest();
 *                             the SRD sends the full table only if it
 *                             differs)
 * and no other key: "id" with register is refused, as is "instance"
 * with renew.
 *
 * Type 2, SRD to SR: { "rev": R, "prev": P, "full": B,
 *                      "routes": [ instance... ], "withdrawn": [ "id"... ] }
 *   full false: the changes from revision P to R; an SR at another
 *               revision than P has missed one and asks for a sync;
 *   full true:  the whole table as of R ("withdrawn" empty, P 0).
 */
#ifndef DMSC_MSG_REG_H
#define DMSC_MSG_REG_H

#include <stdbool.h>
#include <stdint.h>

#include "msg.h"

enum msg_type_reg {
	MSG_REGISTRATION = 1,
	MSG_ROUTES = 2,
};

/* The field sizes of daemon/srd/registry.h, with the NUL. */
#define MSG_ID_MAX	64
#define MSG_ADDR_MAX	48
#define MSG_PREFIX_MAX	52
#define MSG_RTYPE_MAX	32
/* A full table of this many fits one frame (about 250 bytes each). */
#define MSG_ROUTES_MAX	15000

struct msg_instance {
	char id[MSG_ID_MAX];
	char node[MSG_NODE_MAX];
	char sid[MSG_ADDR_MAX];
	char prefix[MSG_PREFIX_MAX];
	char rtype[MSG_RTYPE_MAX];
	uint32_t capability;
	char state[16];		/* "pending", "active", "faulted" */
	uint32_t ttl_ms;
};

enum reg_op { REG_REGISTER, REG_RENEW, REG_DEREGISTER, REG_SYNC, REG_DIGEST };

/* A table's SHA-256 in lowercase hex, with the NUL. */
#define MSG_DIGEST_HEX	65

struct msg_reg {
	enum reg_op op;
	struct msg_instance inst;	/* register */
	char id[MSG_ID_MAX];		/* renew, deregister */
	uint64_t since;			/* sync */
	uint64_t rev;			/* digest: the SR's revision */
	char sha256[MSG_DIGEST_HEX];	/* digest: of its table at rev */
};

struct msg_routes {
	uint64_t rev, prev;
	bool full;
	size_t nroutes, nwithdrawn;
	struct msg_instance *routes;	/* malloc()ed */
	char (*withdrawn)[MSG_ID_MAX];	/* malloc()ed */
};

extern const struct msg_type msg_reg_type;
extern const struct msg_type msg_routes_type;

const char *msg_reg_op_name(enum reg_op op);

struct json_object;
/* An instance as JSON, in the form types 1 and 2 carry it. */
struct json_object *msg_instance_json(const struct msg_instance *i);

/*
 * The digest of a route table, the same at both ends whatever the order
 * of @routes: SHA-256 (OpenSSL's EVP) over the instances sorted by id
 * (ids are unique in a table), each as its eight fields in the order of
 * struct msg_instance, every one a NUL-terminated string (capability and
 * ttl_ms in decimal). An empty table is SHA-256 of nothing. Into @hex,
 * lowercase; 0, or -1 if out of memory or OpenSSL fails.
 */
int msg_routes_digest(const struct msg_instance *routes, size_t n,
		      char hex[MSG_DIGEST_HEX]);

#endif /* DMSC_MSG_REG_H */
