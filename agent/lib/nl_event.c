// SPDX-License-Identifier: GPL-2.0
/*
 * The module's events decoded (nl_event.h). The kernel sends each
 * attribute at its fixed size (kernel/tunnel.c dmsc_tunnel_notify,
 * kernel/credit.c dmsc_session_notify_failed); anything else is refused
 * rather than read past its end.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/dmsc.h>

#include "nl_event.h"

static const char *const names[] = {
	[DMSC_EVENT_TUNNEL_BACKUP] = "tunnel-backup",
	[DMSC_EVENT_TUNNEL_PRIMARY] = "tunnel-primary",
	[DMSC_EVENT_NEXTHOP_FAILED] = "nexthop-failed",
	[DMSC_EVENT_NEXTHOP_DOWN] = "nexthop-down",
};

const char *dmsc_nl_event_name(uint32_t type)
{
	return type < sizeof(names) / sizeof(names[0]) ? names[type] : NULL;
}

/* @a, if present, exactly @size bytes long; else @why says which. */
static bool sized(const struct nlattr *a, int size, const char *name,
		  char *why, size_t len)
{
	if (!a || nla_len(a) == size)
		return true;
	snprintf(why, len, "%s: %d bytes, not %d", name, nla_len(a), size);
	return false;
}

static int decode_tunnel(struct nlattr *nest, struct dmsc_nl_event *ev,
			 char *why, size_t len)
{
	struct nlattr *tb[DMSC_TUNNEL_A_MAX + 1];

	if (nla_parse_nested(tb, DMSC_TUNNEL_A_MAX, nest, NULL)) {
		snprintf(why, len, "tunnel: does not parse");
		return -EINVAL;
	}
	if (!sized(tb[DMSC_TUNNEL_A_ID], 4, "tunnel id", why, len) ||
	    !sized(tb[DMSC_TUNNEL_A_ACTIVE], 1, "tunnel active", why, len))
		return -EINVAL;
	if (tb[DMSC_TUNNEL_A_ID]) {
		ev->has_tunnel = true;
		ev->tunnel = nla_get_u32(tb[DMSC_TUNNEL_A_ID]);
	}
	if (tb[DMSC_TUNNEL_A_ACTIVE]) {
		ev->has_active = true;
		ev->active = nla_get_u8(tb[DMSC_TUNNEL_A_ACTIVE]);
	}
	return 0;
}

static int decode_session(struct nlattr *nest, struct dmsc_nl_event *ev,
			  char *why, size_t len)
{
	struct nlattr *tb[DMSC_SESSION_A_MAX + 1];
	int alen;

	if (nla_parse_nested(tb, DMSC_SESSION_A_MAX, nest, NULL)) {
		snprintf(why, len, "session: does not parse");
		return -EINVAL;
	}
	if (!sized(tb[DMSC_SESSION_A_FAMILY], 1, "session family", why, len) ||
	    !sized(tb[DMSC_SESSION_A_SPORT], 2, "session sport", why, len) ||
	    !sized(tb[DMSC_SESSION_A_QPN], 4, "session qpn", why, len) ||
	    !sized(tb[DMSC_SESSION_A_TUNNEL], 4, "session tunnel", why, len) ||
	    !sized(tb[DMSC_SESSION_A_IFINDEX], 4, "session ifindex", why, len) ||
	    !sized(tb[DMSC_SESSION_A_ON_BACKUP], 1, "session on-backup", why,
		   len) ||
	    !sized(tb[DMSC_SESSION_A_WAITED_US], 8, "session waited_us", why,
		   len))
		return -EINVAL;
	if (tb[DMSC_SESSION_A_TUNNEL]) {
		ev->has_tunnel = true;
		ev->tunnel = nla_get_u32(tb[DMSC_SESSION_A_TUNNEL]);
	}
	if (tb[DMSC_SESSION_A_IFINDEX]) {
		ev->has_ifindex = true;
		ev->ifindex = nla_get_u32(tb[DMSC_SESSION_A_IFINDEX]);
	}
	if (tb[DMSC_SESSION_A_WAITED_US]) {
		ev->has_waited = true;
		ev->waited_us = nla_get_u64(tb[DMSC_SESSION_A_WAITED_US]);
	}
	if (tb[DMSC_SESSION_A_ON_BACKUP])
		ev->on_backup = !!nla_get_u8(tb[DMSC_SESSION_A_ON_BACKUP]);
	if (tb[DMSC_SESSION_A_QPN]) {
		ev->has_qpn = true;
		ev->qpn = nla_get_u32(tb[DMSC_SESSION_A_QPN]);
	}
	/* The flow: all five, or the event names no session. */
	if (!tb[DMSC_SESSION_A_FAMILY] || !tb[DMSC_SESSION_A_SRC] ||
	    !tb[DMSC_SESSION_A_DST] || !tb[DMSC_SESSION_A_SPORT] ||
	    !tb[DMSC_SESSION_A_QPN])
		return 0;
	ev->family = nla_get_u8(tb[DMSC_SESSION_A_FAMILY]);
	if (ev->family != AF_INET && ev->family != AF_INET6) {
		snprintf(why, len, "session family: %u, not AF_INET or AF_INET6",
			 ev->family);
		return -EINVAL;
	}
	alen = ev->family == AF_INET ? 4 : 16;
	if (!sized(tb[DMSC_SESSION_A_SRC], alen, "session src", why, len) ||
	    !sized(tb[DMSC_SESSION_A_DST], alen, "session dst", why, len))
		return -EINVAL;
	memcpy(ev->src, nla_data(tb[DMSC_SESSION_A_SRC]), alen);
	memcpy(ev->dst, nla_data(tb[DMSC_SESSION_A_DST]), alen);
	ev->sport = nla_get_u16(tb[DMSC_SESSION_A_SPORT]);
	ev->has_flow = true;
	return 0;
}

int dmsc_nl_event_decode(struct nlattr **top, struct dmsc_nl_event *ev,
		      char *why, size_t len)
{
	int err;

	memset(ev, 0, sizeof(*ev));
	ev->on_backup = -1;
	if (!top[DMSC_A_EVENT]) {
		snprintf(why, len, "event: missing");
		return -EINVAL;
	}
	if (!sized(top[DMSC_A_EVENT], 4, "event", why, len))
		return -EINVAL;
	ev->type = nla_get_u32(top[DMSC_A_EVENT]);
	if (top[DMSC_A_TUNNEL]) {
		err = decode_tunnel(top[DMSC_A_TUNNEL], ev, why, len);
		if (err)
			return err;
	}
	if (top[DMSC_A_SESSION]) {
		err = decode_session(top[DMSC_A_SESSION], ev, why, len);
		if (err)
			return err;
	}
	return 0;
}

int dmsc_nl_event_check(const struct dmsc_nl_event *ev, char *why, size_t len)
{
	switch (ev->type) {
	case DMSC_EVENT_TUNNEL_BACKUP:
	case DMSC_EVENT_TUNNEL_PRIMARY:
		if (!ev->has_tunnel) {
			snprintf(why, len, "tunnel id: missing");
			return -EINVAL;
		}
		break;
	case DMSC_EVENT_NEXTHOP_FAILED:
	case DMSC_EVENT_NEXTHOP_DOWN:
		if (!ev->has_flow) {
			snprintf(why, len, "session: no flow (family, src, dst, sport, qpn)");
			return -EINVAL;
		}
		break;
	}
	return 0;
}
