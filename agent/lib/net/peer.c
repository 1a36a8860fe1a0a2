// SPDX-License-Identifier: GPL-2.0
/* Role names of peer.h. */
#include <stdio.h>
#include <string.h>

#include "peer.h"

static const struct {
	const char *name;
	unsigned int bit;
} roles[] = {
	{ "srd", ROLE_SRD }, { "smo", ROLE_SMO }, { "sr", ROLE_SR },
	{ "aam", ROLE_AAM }, { "mg", ROLE_MG },
};

unsigned int peer_role_bit(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (!strcmp(name, roles[i].name))
			return roles[i].bit;
	return 0;
}

const char *peer_roles_text(unsigned int r, char *buf, size_t size)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (r & roles[i].bit)
			n += snprintf(buf + n, n < size ? size - n : 0, "%s%s",
				      n ? "," : "", roles[i].name);
	if (!n)
		snprintf(buf, size, "none");
	return buf;
}
