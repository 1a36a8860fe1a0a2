/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who is at the other end of a connection between agents: the node and the
 * roles its certificate names (Documentation/security.md), read from the
 * verified certificate, never from anything the peer says.
 */
#ifndef DMSC_NET_PEER_H
#define DMSC_NET_PEER_H

#include <stddef.h>

#define PEER_NODE_MAX	64	/* with the NUL */

enum peer_role {
	ROLE_SRD = 1u << 0,
	ROLE_SMO = 1u << 1,
	ROLE_SR = 1u << 2,
	ROLE_AAM = 1u << 3,
	ROLE_MG = 1u << 4,
};

struct peer_id {
	char node[PEER_NODE_MAX];
	unsigned int roles;	/* enum peer_role bits */
};

/* The bit of role @name ("sr"), or 0 for a name that is no role. */
unsigned int peer_role_bit(const char *name);
/* "srd,sr" for logs and messages; @buf of at least 24 bytes. */
const char *peer_roles_text(unsigned int roles, char *buf, size_t size);

#endif /* DMSC_NET_PEER_H */
