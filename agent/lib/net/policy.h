/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The AAM's policy: which role may send which message, about which node.
 * Every message an agent receives is checked against the sender's identity
 * from its certificate (peer.h) before it is decoded further; what is not
 * allowed is refused, logged and counted, never acted on. Deny by default:
 * a type without a rule is refused.
 */
#ifndef DMSC_NET_POLICY_H
#define DMSC_NET_POLICY_H

#include <stddef.h>

#include "peer.h"

/*
 * May @peer send a message of @type about node @subject (the node the
 * message speaks for: the MI's node of a registration, the reporting node
 * of a report; NULL if the type has none)? 0 if so, -1 with why in @why.
 */
int policy_check(const struct peer_id *peer, unsigned int type,
		 const char *subject, char *why, size_t whylen);

/* The name of a message type ("qos-report"), or "unknown". */
const char *policy_type_name(unsigned int type);

#endif /* DMSC_NET_POLICY_H */
