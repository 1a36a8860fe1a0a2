/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The gateway's choice of an instance among those of one service prefix:
 * smooth weighted round robin, as nginx's upstream does it. Each pick
 * adds every member's weight to its current weight, takes the member with
 * the largest (the first by id on a tie) and subtracts the total from it.
 * The choices are spread evenly (5:1:1 gives a a b a c a a) and are
 * exact: any run of picks as long as the total weight holds each member
 * as many times as its weight. No clock, no randomness: deterministic.
 */
#ifndef DMSC_MG_PICK_H
#define DMSC_MG_PICK_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "msg_reg.h"

struct wrr_member {
	struct msg_instance inst;
	int64_t weight;
	int64_t cw;		/* the current weight */
	uint64_t chosen;
};

struct wrr_set {
	struct wrr_member *m;	/* sorted by inst.id */
	size_t n;
};

/* An instance's weight: its capability; 0 (none said) counts as 1. */
int64_t wrr_weight(uint32_t capability);

/*
 * Make @fresh (@n members, malloc()ed, taken over, any order) the members
 * of @s: sorted by id; the counts of the members @s had are kept. The
 * same members with the same weights keep their current weights (the
 * round goes on); a changed set starts them again from 0 (it restarts
 * the round, as nginx's does on a reload).
 */
void wrr_set_replace(struct wrr_set *s, struct wrr_member *fresh, size_t n);
/* The member chosen, or -1 if @s is empty. */
ssize_t wrr_pick(struct wrr_set *s);
void wrr_set_free(struct wrr_set *s);

/*
 * An IPv6 prefix ADDR/LEN (registry.md) into @a and @len, with the host
 * bits as given. false if it is not one (LEN 0..128, decimal, no sign or
 * leading zero).
 */
bool mg_prefix_parse(const char *s, struct in6_addr *a, unsigned int *len);

#endif /* DMSC_MG_PICK_H */
