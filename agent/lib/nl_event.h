/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The dmsc module's events (DMSC_CMD_EVENT on the "events" group),
 * decoded: one codec for the CLI's "dmsc monitor" and the RSVP-CBFC
 * speaker, which acts on failovers. An attribute of the wrong length is
 * refused here, before anyone reads it.
 */
#ifndef DMSC_NL_EVENT_H
#define DMSC_NL_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <netlink/attr.h>

struct dmsc_nl_event {
	uint32_t type;		/* DMSC_EVENT_*, or a value this build lacks */
	/* TUNNEL_*: DMSC_A_TUNNEL; NEXTHOP_*: the session's, if it has one */
	bool has_tunnel;
	uint32_t tunnel;
	bool has_active;	/* TUNNEL_*: DMSC_ACTIVE_* */
	uint8_t active;
	/* NEXTHOP_*: the session's flow, the qdisc's device, its wait */
	bool has_flow;
	uint8_t family;		/* AF_INET or AF_INET6 */
	uint8_t src[16], dst[16];	/* 4 or 16 bytes, by family */
	uint16_t sport;
	bool has_qpn;		/* with the flow, or alone */
	uint32_t qpn;
	bool has_ifindex, has_waited;
	uint32_t ifindex;
	uint64_t waited_us;
	int on_backup;		/* -1 absent, 0 failed, 1 moved onto the backup */
};

/*
 * @top, a DMSC_CMD_EVENT message's top-level attributes, into @ev: 0, or
 * -EINVAL with @why naming the attribute (DMSC_A_EVENT missing or not a
 * u32, a nest that does not parse, a member of the wrong length, a
 * family not AF_INET or AF_INET6). What is absent is only marked so: the
 * monitor prints what there is. An event type this build does not know
 * decodes too: the caller decides what to do with it.
 */
int dmsc_nl_event_decode(struct nlattr **top, struct dmsc_nl_event *ev,
			 char *why, size_t len);

/*
 * What @ev's type must carry to be acted on: a NEXTHOP_* event its
 * session's flow (family, src, dst, sport, qpn), a TUNNEL_* one its
 * tunnel's id. 0, or -EINVAL with @why.
 */
int dmsc_nl_event_check(const struct dmsc_nl_event *ev, char *why, size_t len);

/* "tunnel-backup", "tunnel-primary", "nexthop-failed", "nexthop-down", or NULL */
const char *dmsc_nl_event_name(uint32_t type);

#endif /* DMSC_NL_EVENT_H */
