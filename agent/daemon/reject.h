/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What an agent refused: counted by reason, the last few kept with who
 * sent them and why (dmsc agent show rejected), each logged once.
 *
 * Reasons: cert-unknown-ca, cert-expired, cert-revoked, tls (another
 * handshake failure), frame (a length of 0 or above 4 MiB), malformed
 * (the codec refused it), node (the header or the subject is not the
 * sender's node), role (the sender's roles may not send the type),
 * type (no rule or not for this role), owner (an instance of another
 * node), registry (the registry refused it).
 */
#ifndef DMSC_REJECT_H
#define DMSC_REJECT_H

#include <stdint.h>
#include <time.h>
#include <json-c/json.h>

#define REJECT_REASONS	16
#define REJECT_RECENT	32

struct rejects {
	struct {
		char reason[24];
		uint64_t n;
	} by[REJECT_REASONS];
	size_t nby;
	uint64_t total;
	struct {
		time_t when;
		char reason[24];
		char peer[64];
		char why[256];
	} recent[REJECT_RECENT];	/* a ring: total % REJECT_RECENT next */
};

void reject_note(struct rejects *r, const char *reason, const char *peer,
		 const char *why);
/* How many of @reason so far. */
uint64_t reject_count(const struct rejects *r, const char *reason);
/* { "total": N, "by_reason": { R: N }, "recent": [ {when, reason, peer, why} ] } */
struct json_object *reject_json(const struct rejects *r);

#endif /* DMSC_REJECT_H */
