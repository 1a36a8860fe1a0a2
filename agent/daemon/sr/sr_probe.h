/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The SR's probe of its node's instances, for the latency of type 4
 * (msg_node.h, "probe"): every report period one ICMPv6 echo request to
 * each registered instance's SID, on a raw ICMPv6 socket of the agent's
 * network namespace, its answer read on the agent's loop. An echo not
 * answered by the next round is lost. The round trip is the network's to
 * the instance (its SID's stack answers, not the service), the one thing
 * the SR can measure of every MI without the MI's help.
 */
#ifndef DMSC_SR_PROBE_H
#define DMSC_SR_PROBE_H

#include <stddef.h>

#include <json-c/json.h>

#include "msg_node.h"
#include "msg_reg.h"

struct agent;
struct sr_probe;

/*
 * The probe of @a's instances, or NULL (logged) if there is no raw ICMPv6
 * socket (no CAP_NET_RAW): the reports then go without "probe".
 */
struct sr_probe *sr_probe_new(struct agent *a);
void sr_probe_free(struct sr_probe *p);

/*
 * One round: the echoes of the last round that were not answered are
 * lost; an instance no longer among the @n of @local is forgotten; each
 * of them is sent an echo.
 */
void sr_probe_round(struct sr_probe *p, const struct msg_instance *local,
		    size_t n);

/* @id's figures into @n ("probe"); nothing if it has not been probed. */
void sr_probe_fill(const struct sr_probe *p, const char *id,
		   struct node_inst *n);

/* { "sent", "answered", "lost", "send_errors", "strays", "instances" } */
struct json_object *sr_probe_show(const struct sr_probe *p);

#endif /* DMSC_SR_PROBE_H */
