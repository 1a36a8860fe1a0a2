/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sr role's RSVP-CBFC speaker (the "sr.rsvp" section): the speaker
 * of rsvp_speaker.c on the agent's event loop, its sockets read as they
 * become readable and its timers ticked every RSVP_SPEAKER_TICK_MS.
 * Stopping drops every state, so the node's kernel credit sessions go
 * with the role (the sources' refreshes set them up again).
 *
 * The "credit" flows of the SMO's policies for this node are set up from
 * here, their source: each as soon as it is wanted, a failed list of it
 * again after a backoff (SR_RSVP_RETRY_MS doubling to _MAX_MS), torn
 * down (PathTear along its lists) when its policy no longer has it, and
 * torn down and set up anew when its hops change. Flows an operator set
 * up through the control socket are not this code's (the speaker tags
 * each flow with who set it up): a policy's flow that is already set up
 * by hand is refused, and retried, until the operator tears it down.
 */
#ifndef DMSC_SR_RSVP_H
#define DMSC_SR_RSVP_H

#include <event2/event.h>
#include <json-c/json.h>

#include "config.h"
#include "msg_policy.h"

#define SR_RSVP_RETRY_MS	5000
#define SR_RSVP_RETRY_MAX_MS	60000

struct sr_rsvp;

/* NULL, with the reason logged, when it could not start. */
struct sr_rsvp *sr_rsvp_start(struct event_base *base,
			      const struct rsvp_config *cfg, bool kernel);
void sr_rsvp_stop(struct sr_rsvp *r);
/* The credit flows of @n policies are what this node must hold now. */
void sr_rsvp_want(struct sr_rsvp *r, const struct policy *p, size_t n);
struct json_object *sr_rsvp_show(const struct sr_rsvp *r);

#endif /* DMSC_SR_RSVP_H */
