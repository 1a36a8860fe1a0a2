// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the RSVP-CBFC parser (rsvp_parse) on any bytes.
 * Besides the sanitizers' findings: what the parser accepts, the builder
 * writes again into a message the parser accepts with the same contents,
 * and writing that once more gives the same bytes (one encoding).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rsvp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t b1[RSVP_MSG_MAX], b2[RSVP_MSG_MAX];
	struct rsvp_msg m, back;
	char why[256];
	int l1, l2;

	if (rsvp_parse(data, size, &m, why, sizeof(why)) != RSVP_OK)
		return 0;
	l1 = rsvp_build(&m, b1, sizeof(b1), why, sizeof(why));
	if (l1 < 0 || rsvp_parse(b1, l1, &back, why, sizeof(why)) != RSVP_OK)
		abort();
	l2 = rsvp_build(&back, b2, sizeof(b2), why, sizeof(why));
	if (l2 != l1 || memcmp(b1, b2, l1) || back.type != m.type ||
	    back.qpn != m.qpn || back.sport != m.sport ||
	    memcmp(&back.dst, &m.dst, sizeof(m.dst)) ||
	    memcmp(&back.src, &m.src, sizeof(m.src)) ||
	    rsvp_credit_bytes(&back) != rsvp_credit_bytes(&m))
		abort();
	return 0;
}
