/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sr role's RSVP-CBFC speaker (the "sr.rsvp" section): the speaker
 * of rsvp_speaker.c on the agent's event loop, its sockets read as they
 * become readable and its timers ticked every RSVP_SPEAKER_TICK_MS.
 * Stopping drops every state, so the node's kernel credit sessions go
 * with the role (the sources' refreshes set them up again).
 */
#ifndef DMSC_SR_RSVP_H
#define DMSC_SR_RSVP_H

#include <event2/event.h>
#include <json-c/json.h>

#include "config.h"

struct sr_rsvp;

/* NULL, with the reason logged, when it could not start. */
struct sr_rsvp *sr_rsvp_start(struct event_base *base,
			      const struct rsvp_config *cfg, bool kernel);
void sr_rsvp_stop(struct sr_rsvp *r);
struct json_object *sr_rsvp_show(const struct sr_rsvp *r);

#endif /* DMSC_SR_RSVP_H */
