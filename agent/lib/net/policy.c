// SPDX-License-Identifier: GPL-2.0
/*
 * The policy table of policy.h, after draft-yang-dmsc-distributed-model-04
 * §4: who originates each signalling type.
 */
#include <stdio.h>
#include <string.h>

#include "policy.h"

struct rule {
	const char *name;
	unsigned int senders;	/* roles that may send it */
	int own_node;		/* the subject must be the sender's node */
};

static const struct rule rules[] = {
	/*
	 * MIs register at startup (§4); here through the agent of their
	 * node, which holds the node's certificate, and only for that node;
	 * a gateway (mg) sends its sync and digest ops only, which the srd
	 * role holds it to (srd_role.c), to keep the route table
	 */
	[1] = { "instance-registration", ROLE_SR | ROLE_MG, 1 },
	/* the registry tells the SRs what is reachable */
	[2] = { "route-advertisement", ROLE_SRD, 0 },
	/* the AAM issues tokens; the gateway and SRs ask for them */
	[3] = { "access-authentication", ROLE_AAM | ROLE_MG | ROLE_SR, 0 },
	/* an SR reports load, hardware and latency of its own node's MIs */
	[4] = { "node-state-report", ROLE_SR, 1 },
	/* SRs and gateways report QoS telemetry of their own node (§4) */
	[5] = { "qos-report", ROLE_SR | ROLE_MG, 1 },
	/*
	 * the orchestrator programs the SRs (§4): tunnels and rules in a
	 * node's kernel steer its traffic, so no other role may push them
	 */
	[6] = { "policy-push", ROLE_SMO, 0 },
};

#define NRULES (sizeof(rules) / sizeof(rules[0]))

const char *policy_type_name(unsigned int type)
{
	return type < NRULES && rules[type].name ? rules[type].name : "unknown";
}

int policy_check(const struct peer_id *peer, unsigned int type,
		 const char *subject, char *why, size_t whylen)
{
	const struct rule *r = type < NRULES && rules[type].name ? &rules[type] : NULL;
	char have[32], need[32];

	if (!r) {
		snprintf(why, whylen, "type %u from %s: no rule allows it", type,
			 peer->node);
		return -1;
	}
	if (!(peer->roles & r->senders)) {
		snprintf(why, whylen, "type %u (%s) from %s [%s]: only %s may send it",
			 type, r->name, peer->node,
			 peer_roles_text(peer->roles, have, sizeof(have)),
			 peer_roles_text(r->senders, need, sizeof(need)));
		return -1;
	}
	if (r->own_node && (!subject || strcmp(subject, peer->node))) {
		snprintf(why, whylen, "type %u (%s) from %s about node %s: only for its own node",
			 type, r->name, peer->node, subject ? subject : "(none)");
		return -1;
	}
	return 0;
}
