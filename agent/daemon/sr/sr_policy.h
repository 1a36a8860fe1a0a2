/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sr role's policies (type 6 from the SMO): what the SMO wants this
 * node to hold, what this agent installed in its kernel, and the
 * reconciliation of the kernel with both (sr_policy.c says the rules).
 */
#ifndef DMSC_SR_POLICY_H
#define DMSC_SR_POLICY_H

#include <stdbool.h>
#include <json-c/json.h>

#include "msg_policy.h"

struct sr_policy;

/*
 * @kernel false: nothing is programmed, the installed set follows the
 * desired one (a host test). @save writes the state file (which holds
 * sr_policy_state()) whole; it is called before a kernel object is made,
 * so that whatever this agent made is on record before it exists.
 */
struct sr_policy *sr_policy_new(bool kernel, void (*save)(void *), void *arg);
void sr_policy_free(struct sr_policy *s);

/* Type 6 from the SMO: taken or ignored by revision, then reconciled. */
void sr_policy_push(struct sr_policy *s, const struct msg_policy *m);
/* The kernel against what is desired and installed; 0 or -1 (logged). */
int sr_policy_reconcile(struct sr_policy *s);

/* What the SMO wants this node to hold now: @n policies. */
const struct policy *sr_policy_desired(const struct sr_policy *s, size_t *n);

/* { "rev", "desired": [ policy ], "installed": { "tunnels", "rules" } } */
struct json_object *sr_policy_state(const struct sr_policy *s);
/* The same from a state file. -1 (logged) if it is not that. */
int sr_policy_load(struct sr_policy *s, struct json_object *o);
/* For dmsc agent show policies: the state and the counters. */
struct json_object *sr_policy_show(const struct sr_policy *s);

#endif /* DMSC_SR_POLICY_H */
