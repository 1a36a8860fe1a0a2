// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the decoder of messages between agents (msg_decode)
 * on any bytes. Besides the sanitizers' findings, a message the decoder
 * accepts must encode again into a frame it accepts with the same
 * contents: the two sides agree on what a valid message is.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "msg_qos.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct msg m, back;
	char err[256], *frame;
	size_t len, plen;
	struct qos_report *a, *b;

	/* A frame header too, when there is one to read. */
	if (size >= MSG_HDR_LEN)
		msg_frame_len(data, &plen, err, sizeof(err));
	if (msg_decode((const char *)data, size, &m, err, sizeof(err)))
		return 0;
	if (msg_encode(&m, &frame, &len, err, sizeof(err)))
		abort();
	if (msg_frame_len((unsigned char *)frame, &plen, err, sizeof(err)) ||
	    plen != len - MSG_HDR_LEN ||
	    msg_decode(frame + MSG_HDR_LEN, plen, &back, err, sizeof(err)))
		abort();
	if (back.seq != m.seq || strcmp(back.node, m.node) || back.type != m.type)
		abort();
	if (m.type->type == MSG_QOS_REPORT) {
		a = m.body;
		b = back.body;
		if (a->ndevs != b->ndevs || a->nqps != b->nqps ||
		    (a->nqps && memcmp(a->qps, b->qps, a->nqps * sizeof(*a->qps))) ||
		    (a->ndevs && memcmp(a->devs, b->devs, a->ndevs * sizeof(*a->devs))))
			abort();
	} else {
		/* other types: the decoded copy encodes to the same bytes */
		char *again;
		size_t alen;

		if (msg_encode(&back, &again, &alen, err, sizeof(err)) ||
		    alen != len || memcmp(again, frame, len))
			abort();
		free(again);
	}
	free(frame);
	msg_free(&back);
	msg_free(&m);
	return 0;
}
