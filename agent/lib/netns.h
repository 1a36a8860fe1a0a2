/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Named network namespaces as ip-netns(8) keeps them: a bind mount at
 * /run/netns/NAME. dmsc -n NAME enters one before it opens netlink,
 * as ip -n does.
 */
#ifndef DMSC_NETNS_H
#define DMSC_NETNS_H

#define NETNS_RUN_DIR "/run/netns"

/* A name ip netns would accept; prints the error itself. 0 or -1. */
int netns_check_name(const char *name);
/* Move this process into namespace @name; prints the error. 0 or -1. */
int netns_enter(const char *name);

#endif /* DMSC_NETNS_H */
