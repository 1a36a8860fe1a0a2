/* SPDX-License-Identifier: GPL-2.0 */
/* For the in-process SRs of test_roles.c and bench_registry.c. */
#ifndef DMSC_TESTS_ROUTES_FRAME_H
#define DMSC_TESTS_ROUTES_FRAME_H

#include <stdint.h>
#include <stdio.h>

#include "msg.h"
#include "msg_reg.h"

/*
 * The revision a type-2 frame from the SRD carries; 0 for a frame of
 * another type or one that does not decode (said on stdout, as KTAP
 * diagnostics).
 */
static inline uint64_t routes_frame_rev(const unsigned char *p, size_t len)
{
	uint64_t rev = 0;
	char err[256];
	struct msg m;

	if (msg_decode((const char *)p, len, &m, err, sizeof(err))) {
		printf("# undecodable frame: %s\n", err);
		return 0;
	}
	if (m.type->type == MSG_ROUTES)
		rev = ((struct msg_routes *)m.body)->rev;
	msg_free(&m);
	return rev;
}

/*
 * An SR's frame: note the revision of a push in *@rev, and in *@seen_us
 * (if not yet set) the time @now_us when it reached @want (0: none).
 */
static inline void routes_frame_seen(const unsigned char *p, size_t len,
				     uint64_t *rev, uint64_t want,
				     double *seen_us, double now_us)
{
	uint64_t r = routes_frame_rev(p, len);

	if (!r)
		return;
	*rev = r;
	if (want && r >= want && !*seen_us)
		*seen_us = now_us;
}

#endif /* DMSC_TESTS_ROUTES_FRAME_H */
