// SPDX-License-Identifier: GPL-2.0
/*
 * mg_pick.h: smooth weighted round robin over the instances of a service
 * prefix; on its own (no agent) so that tests/test_mg_pick.c checks it.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "mg_pick.h"

int64_t wrr_weight(uint32_t capability)
{
	return capability ? capability : 1;
}

static int by_id(const void *x, const void *y)
{
	return strcmp(((const struct wrr_member *)x)->inst.id,
		      ((const struct wrr_member *)y)->inst.id);
}

void wrr_set_replace(struct wrr_set *s, struct wrr_member *fresh, size_t n)
{
	size_t i = 0, j = 0, same = 0;

	if (n)
		qsort(fresh, n, sizeof(*fresh), by_id);
	/* both sorted by id: one merge carries the counts over */
	while (i < n && j < s->n) {
		int d = strcmp(fresh[i].inst.id, s->m[j].inst.id);

		if (d == 0) {
			fresh[i].chosen = s->m[j].chosen;
			same += fresh[i].weight == s->m[j].weight;
		}
		if (d <= 0)
			i++;
		if (d >= 0)
			j++;
	}
	/*
	 * The same members with the same weights (the table changed
	 * elsewhere): the round goes on. Restarting it would send the next
	 * pick to the heaviest member every time, and under churn of other
	 * services every pick.
	 */
	same = same == n && n == s->n;
	for (i = 0; i < n; i++)
		fresh[i].cw = same ? s->m[i].cw : 0;
	free(s->m);
	s->m = fresh;
	s->n = n;
}

ssize_t wrr_pick(struct wrr_set *s)
{
	int64_t total = 0;
	ssize_t best = -1;

	for (size_t i = 0; i < s->n; i++) {
		s->m[i].cw += s->m[i].weight;
		total += s->m[i].weight;
		if (best < 0 || s->m[i].cw > s->m[best].cw)
			best = (ssize_t)i;
	}
	if (best >= 0) {
		s->m[best].cw -= total;
		s->m[best].chosen++;
	}
	return best;
}

void wrr_set_free(struct wrr_set *s)
{
	free(s->m);
	s->m = NULL;
	s->n = 0;
}

bool mg_prefix_parse(const char *s, struct in6_addr *a, unsigned int *len)
{
	const char *slash = strchr(s, '/');
	char addr[INET6_ADDRSTRLEN];
	unsigned int n = 0;

	if (!slash || slash == s || (size_t)(slash - s) >= sizeof(addr) ||
	    !slash[1] || strlen(slash + 1) > 3 || (slash[1] == '0' && slash[2]))
		return false;
	for (const char *p = slash + 1; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		n = n * 10 + (unsigned int)(*p - '0');
	}
	if (n > 128)
		return false;
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	if (inet_pton(AF_INET6, addr, a) != 1)
		return false;
	*len = n;
	return true;
}
