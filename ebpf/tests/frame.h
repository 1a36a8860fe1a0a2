/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RoCEv2 frames for running the telemetry program through
 * BPF_PROG_TEST_RUN: Ethernet, IPv4 10.0.0.1 > 10.0.0.2, UDP 49152 >
 * 4791, a BTH (@opcode, transport version @tver, dest QP @qpn, @psn),
 * @payload bytes and the ICRC; optionally inside SRv6 (outer IPv6
 * fc00::1 > fc00::2 and an SRH with that one SID, as H.Encaps makes it).
 */
#ifndef DMSC_TEST_FRAME_H
#define DMSC_TEST_FRAME_H

#include <stddef.h>

/* Big enough for the SRv6 frame (one SID) with a 64-byte payload. */
#define FRAME_MAX	256

size_t frame(unsigned char *b, unsigned int opcode, unsigned int tver,
	     unsigned int qpn, unsigned int psn, unsigned int payload);
size_t frame_srv6(unsigned char *b, unsigned int opcode, unsigned int qpn,
		  unsigned int psn, unsigned int payload);
/* The same with @nsid (1..127) SIDs in the SRH: 8 + 16 * @nsid bytes. */
size_t frame_srv6_sids(unsigned char *b, unsigned int opcode, unsigned int qpn,
		       unsigned int psn, unsigned int payload, unsigned int nsid);

#endif /* DMSC_TEST_FRAME_H */
