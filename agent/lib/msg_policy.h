/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Type 6, policy push (msg.h): the SMO tells an SR which tunnels and
 * rules it must hold. A policy is one tunnel of the dmsc module (its id,
 * outer source, weighted segment lists and backup) with the rules that
 * steer into it, for one target node:
 *
 *   { "name": "P", "node": "N", "tunnel": ID, "src": "ADDR",
 *     "paths": [ { "segs": [ "SID", ... ], "weight": W }, ... ],
 *     "backup": [ "SID", ... ],                       (optional)
 *     "rules": [ { "dst": "PREFIX", "src": "PREFIX",  (src optional)
 *                  "qpn": "LO-HI" }, ... ],           (qpn optional)
 *     "credit": [ { "src": "ADDR", "dst": "ADDR",     (optional)
 *                   "sport": PORT, "qpn": QPN,
 *                   "path": [ "HOP", ... ],
 *                   "backup": [ "HOP", ... ] }, ... ] }   (backup optional)
 *
 * A "credit" entry is a RoCEv2 flow of the tunnel under credit-based flow
 * control: the target node's sr role sets it up hop by hop with RSVP-CBFC
 * along "path" and "backup", the RSVP addresses of the hops (their
 * speakers' own, sr.rsvp), and tears it down when the entry goes.
 *
 * The message, SMO to SR: { "rev": R, "full": B, "policies": [ ... ] }
 * always carries the whole set of the receiving node, so that one lost or
 * reordered push cannot leave an SR half right: "rev" is the SMO's
 * revision (one more per change), "full" is true on the push a new
 * connection gets (the SR takes it whatever its revision: the SMO may
 * have restarted), false on a change (the SR ignores one at or below its
 * revision, and counts a gap when it is more than one above).
 *
 * "term" (optional, at least 1) is set where several controllers share
 * an etcd: the etcd revision at which the SMO leader wrote the set that
 * this push relays (its key's mod_revision), so it grows with every
 * write by any leader. An SR refuses a push, full or not, whose term is
 * below the highest it applied; a push without a term (one controller,
 * SQLite) is taken by "rev" and "full" alone.
 *
 * "epoch" (optional, at least 1, only with "term") is the etcd cluster's
 * id (its cluster_id) when the term was read: an etcd restored from a
 * snapshot is a new cluster whose revisions went back, so a term of
 * another epoch is newer whatever its value. Left out, an SR orders by
 * term alone (an SMO from before epochs).
 *
 * The same policy objects make the SMO's policy file and the SR's state
 * file: { "policies": [ ... ] }. Documentation/agent.md has examples.
 */
#ifndef DMSC_MSG_POLICY_H
#define DMSC_MSG_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>

#include <linux/dmsc.h>

#include "msg.h"
#include "rsvp.h"

enum { MSG_POLICY = 6 };

#define POLICY_NAME_MAX		64
#define POLICY_RULES_MAX	16
#define POLICY_CREDIT_MAX	16
#define POLICY_HOPS_MAX		(RSVP_ERO_HOPS_MAX + 1)
/* the policies of one node in one push (about 1 KiB each in JSON) */
#define MSG_POLICIES_MAX	1024

struct pol_path {
	struct in6_addr segs[DMSC_MAX_SEGS];
	uint32_t nsegs;		/* 0: no backup */
	uint32_t weight;	/* 1 if not given */
};

/* A rule as the kernel keys it: family, dst, src, qpn range. */
struct pol_rule {
	uint8_t family;		/* AF_INET or AF_INET6 */
	uint8_t dst[16], dst_len;
	uint8_t src[16], src_len;	/* src_len 0: any source */
	uint32_t qpn_lo, qpn_hi;	/* 0..DMSC_QPN_MAX when not given */
	uint32_t tunnel;
};

/* A flow under credit control and the hops of its RSVP-CBFC set-up. */
struct pol_credit {
	struct rsvp_flow flow;		/* src and dst of one family */
	uint32_t npath, nbackup;	/* nbackup 0: no backup */
	struct rsvp_addr path[POLICY_HOPS_MAX];
	struct rsvp_addr backup[POLICY_HOPS_MAX];
};

struct policy {
	char name[POLICY_NAME_MAX];	/* "" for a tunnel read from a kernel */
	char node[MSG_NODE_MAX];
	uint32_t tunnel;
	struct in6_addr src;
	uint32_t npaths;
	struct pol_path paths[DMSC_MAX_PATHS];
	struct pol_path backup;
	uint32_t nrules;
	struct pol_rule rules[POLICY_RULES_MAX];
	uint32_t ncredit;
	struct pol_credit credit[POLICY_CREDIT_MAX];
};

struct msg_policy {
	uint64_t rev;
	bool full;
	uint64_t term;		/* 0: none */
	uint64_t epoch;		/* of the term; 0: none */
	size_t n;
	struct policy *p;	/* malloc()ed */
};

extern const struct msg_type msg_policy_type;

/* One policy from JSON, errors naming "@path.field". */
int policy_from_json(struct json_object *o, const char *path,
		     struct policy *p, char *err, size_t errlen);
struct json_object *policy_json(const struct policy *p);
struct json_object *pol_rule_json(const struct pol_rule *r);
int pol_rule_from_json(struct json_object *o, const char *path,
		       struct pol_rule *r, char *err, size_t errlen);

/*
 * The array @arr of policies into a malloc()ed @out: names unique, tunnel
 * ids unique per node. -1 with the field named in @err.
 */
int policy_array_parse(struct json_object *arr, const char *path,
		       struct policy **out, size_t *n, char *err,
		       size_t errlen);

/* Same tunnel in a kernel: source, paths in order with weights, backup. */
bool policy_tunnel_eq(const struct policy *a, const struct policy *b);
/* Same flow (rsvp_flow_eq) and the same hops, in order. */
bool pol_credit_eq(const struct pol_credit *a, const struct pol_credit *b);
/* Same key (family, dst, src, qpn range); the tunnel is not compared. */
bool pol_rule_key_eq(const struct pol_rule *a, const struct pol_rule *b);

#endif /* DMSC_MSG_POLICY_H */
