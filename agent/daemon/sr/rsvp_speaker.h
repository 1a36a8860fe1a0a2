/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RSVP-CBFC speaker of one node: hop-by-hop set-up (PATH down the
 * hops, RESV back up, a kernel credit session per hop) and teardown, on
 * raw IPPROTO_RSVP sockets in a poll loop. Documentation/cbfc.md,
 * "Signalling". dmsc-rsvp (rsvp_main.c) runs it without the daemon.
 */
#ifndef DMSC_RSVP_SPEAKER_H
#define DMSC_RSVP_SPEAKER_H

#include <stdint.h>

#include "rsvp.h"

/* Counters the speaker prints (ctl "stats"), by name. */
enum rsvp_counter {
	RC_RX_PATH, RC_RX_RESV, RC_RX_PATHTEAR, RC_RX_PATHERR,
	RC_TX_PATH, RC_TX_RESV, RC_TX_PATHTEAR, RC_TX_PATHERR,
	RC_RETRANSMITS,		/* PATH sent again, no RESV yet */
	RC_GAVE_UP,		/* next hop silent after the retries */
	RC_EXPIRED,		/* path state not refreshed in time */
	RC_UNKNOWN_SESSION,	/* RESV/PathTear/PathErr without state */
	RC_KERNEL_ERRORS,	/* the kernel refused SESSION_NEW/DEL */
	RC_SESSIONS_ADDED, RC_SESSIONS_DELETED,
	RC_IGNORED_OBJECTS,	/* 10bbbbbb/11bbbbbb objects skipped */
	RC_TABLE_FULL,
	RC_COUNT
};

struct rsvp_speaker_cfg {
	struct rsvp_addr addr6, addr4;	/* own addresses; family 0 if none */
	uint64_t credit;	/* bytes this node reserves for upstream */
	uint8_t form;		/* RSVP_CTYPE_CREDIT_MB or _CUMULATIVE */
	uint32_t refresh_ms;	/* PATH refresh period R */
	uint32_t retry_ms;	/* PATH retransmission, doubled each time */
	unsigned int retries;	/* retransmissions before giving up */
	const char *ctl_path;	/* unix socket for dmsc-rsvp's commands */
	bool no_kernel;		/* no dmsc.ko: state only (unit use) */
};

/* Runs until SIGTERM/SIGINT; 0, or 1 after an error it printed. */
int rsvp_speaker_run(const struct rsvp_speaker_cfg *cfg);

#endif /* DMSC_RSVP_SPEAKER_H */
