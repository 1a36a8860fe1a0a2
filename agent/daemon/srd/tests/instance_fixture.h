/* SPDX-License-Identifier: GPL-2.0 */
/* The instance every registry test registers: instance @n of node @node. */
#ifndef DMSC_SRD_TEST_INSTANCE_H
#define DMSC_SRD_TEST_INSTANCE_H

#include <stdio.h>
#include <string.h>

#include "registry.h"

static inline void mi(struct srd_instance *i, const char *id, const char *node,
		      int n)
{
	memset(i, 0, sizeof(*i));
	snprintf(i->id, sizeof(i->id), "%s", id);
	snprintf(i->node, sizeof(i->node), "%s", node);
	snprintf(i->sid, sizeof(i->sid), "fc00:%x::100", n);
	snprintf(i->prefix, sizeof(i->prefix), "2001:db8:%x::/48", n);
	strcpy(i->rtype, "gpu");
	i->capability = 312 + n;
	i->state = SRD_ACTIVE;
	i->ttl_ms = 3000;
}

#endif
