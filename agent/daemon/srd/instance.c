// SPDX-License-Identifier: GPL-2.0
/*
 * What a registered instance must look like, whatever the store: checked
 * once here, before any store sees it, so that both stores refuse the same
 * things with the same words.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "registry.h"

static const char *const state_names[] = {
	[SRD_PENDING] = "pending",
	[SRD_ACTIVE] = "active",
	[SRD_FAULTED] = "faulted",
};

const char *srd_state_name(enum srd_state s)
{
	return (unsigned int)s < sizeof(state_names) / sizeof(state_names[0]) ?
	       state_names[s] : "?";
}

int srd_state_parse(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(state_names) / sizeof(state_names[0]); i++)
		if (!strcmp(name, state_names[i]))
			return (int)i;
	return -1;
}

/* Bounded, NUL-terminated, and of the characters @ok allows. */
static bool text_in(const char *s, size_t size, const char *ok)
{
	size_t n = strnlen(s, size);

	return n > 0 && n < size && strspn(s, ok) == n;
}

#define NAME_CHARS	"abcdefghijklmnopqrstuvwxyz0123456789-"
#define ID_CHARS	NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZ._:"

static bool ipv6_ok(const char *s)
{
	struct in6_addr a;

	return inet_pton(AF_INET6, s, &a) == 1;
}

static bool prefix_ok(const char *s)
{
	char addr[SRD_PREFIX_MAX], *slash, *end;
	struct in6_addr a;
	long len;

	if (strnlen(s, sizeof(addr)) >= sizeof(addr))
		return false;
	strcpy(addr, s);
	slash = strchr(addr, '/');
	if (!slash)
		return false;
	*slash = '\0';
	len = strtol(slash + 1, &end, 10);
	return slash[1] >= '0' && slash[1] <= '9' && !*end && len >= 0 &&
	       len <= 128 && inet_pton(AF_INET6, addr, &a) == 1;
}

int srd_instance_check(const struct srd_instance *i, char *err, size_t errlen)
{
	const char *bad = NULL;

	if (!text_in(i->id, sizeof(i->id), ID_CHARS))
		bad = "id: 1-63 of letters, digits and - . _ :";
	else if (!text_in(i->node, sizeof(i->node), NAME_CHARS) ||
		 i->node[0] == '-')
		bad = "node: not a node name (a-z, 0-9, -)";
	else if (!ipv6_ok(i->sid))
		bad = "sid: not an IPv6 address";
	else if (!prefix_ok(i->prefix))
		bad = "prefix: not an IPv6 prefix ADDR/LEN";
	else if (!text_in(i->rtype, sizeof(i->rtype), NAME_CHARS))
		bad = "rtype: 1-31 of a-z, 0-9 and -";
	else if ((unsigned int)i->state > SRD_FAULTED)
		bad = "state: not pending, active or faulted";
	else if (i->ttl_ms < SRD_TTL_MIN_MS || i->ttl_ms > SRD_TTL_MAX_MS)
		bad = "ttl_ms: out of range 100-3600000";
	if (!bad)
		return 0;
	snprintf(err, errlen, "%s", bad);
	return -1;
}

int srd_not_owner(const char *id, const char *owner, const char *node,
		  char *err, size_t errlen)
{
	snprintf(err, errlen, "id: %.63s is registered on node %s, not %s",
		 id, owner, node);
	return -1;
}

/*
 * An instance as JSON: etcd's stored value and the srd role's
 * "show instances" (which adds the revision).
 */
struct json_object *srd_instance_json(const struct srd_instance *i)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_string(i->id));
	json_object_object_add(o, "node", json_object_new_string(i->node));
	json_object_object_add(o, "sid", json_object_new_string(i->sid));
	json_object_object_add(o, "prefix", json_object_new_string(i->prefix));
	json_object_object_add(o, "rtype", json_object_new_string(i->rtype));
	json_object_object_add(o, "capability", json_object_new_int64(i->capability));
	json_object_object_add(o, "state", json_object_new_string(srd_state_name(i->state)));
	json_object_object_add(o, "ttl_ms", json_object_new_int64(i->ttl_ms));
	return o;
}
