/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RSVP-CBFC messages (RFC 2205 common header and objects, the draft's
 * types 28/29, our Credit and QP objects): one codec for the speaker, the
 * tests and the fuzzer. rsvp_build() writes what rsvp_parse() accepts and
 * nothing rsvp_parse() accepts is outside what rsvp_build() can write.
 * Wire layout: Documentation/cbfc.md, "Signalling".
 */
#ifndef DMSC_RSVP_H
#define DMSC_RSVP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>	/* AF_INET */

#include <linux/dmsc_cbfc.h>

#define RSVP_ROCE_PORT	4791	/* the SESSION's destination port */

struct rsvp_addr {
	uint8_t family;		/* AF_INET or AF_INET6 */
	uint8_t a[16];		/* 4 bytes used for AF_INET */
};

/* A flow, as the kernel's credit session and a SESSION key it. */
struct rsvp_flow {
	struct rsvp_addr dst, src;
	uint16_t sport;
	uint32_t qpn;
};

/* Inline: the message decoder's fuzz target links no rsvp.c. */
static inline bool rsvp_addr_eq(const struct rsvp_addr *a,
				const struct rsvp_addr *b)
{
	return a->family == b->family &&
	       !memcmp(a->a, b->a, a->family == AF_INET ? 4 : 16);
}

static inline bool rsvp_flow_eq(const struct rsvp_flow *a,
				const struct rsvp_flow *b)
{
	return rsvp_addr_eq(&a->dst, &b->dst) &&
	       rsvp_addr_eq(&a->src, &b->src) &&
	       a->sport == b->sport && a->qpn == b->qpn;
}

/*
 * Why a message was refused, each counted by the speaker. The order is
 * the order of the checks, and rsvp_reason_name() names each.
 */
enum rsvp_reason {
	RSVP_OK,
	RSVP_E_SHORT,		/* less than a common header */
	RSVP_E_VERSION,		/* not version 1 */
	RSVP_E_LENGTH,		/* header length is not the datagram's */
	RSVP_E_CHECKSUM,	/* absent or wrong */
	RSVP_E_TYPE,		/* a message type we do not speak */
	RSVP_E_OBJ_LENGTH,	/* object length < 4, not a multiple of 4,
				 * past the end, or wrong for its C-Type */
	RSVP_E_UNKNOWN_CLASS,	/* Class-Num 0bbbbbbb we do not know */
	RSVP_E_UNKNOWN_CTYPE,	/* known class, unknown C-Type */
	RSVP_E_DUPLICATE,	/* an object twice */
	RSVP_E_MISSING,		/* a mandatory object missing */
	RSVP_E_NOT_ALLOWED,	/* a known object this type does not carry */
	RSVP_E_VALUE,		/* a field out of range */
	RSVP_REASON_COUNT
};

const char *rsvp_reason_name(enum rsvp_reason r);

/* Objects, a bit each, for present/mandatory sets. */
enum {
	RSVP_O_SESSION = 1 << 0,
	RSVP_O_HOP = 1 << 1,
	RSVP_O_TIME = 1 << 2,
	RSVP_O_ERROR = 1 << 3,
	RSVP_O_SENDER = 1 << 4,	/* SENDER_TEMPLATE (PATH, tear, error) */
	RSVP_O_FILTER = 1 << 5,	/* FILTER_SPEC (RESV) */
	RSVP_O_ERO = 1 << 6,
	RSVP_O_QP = 1 << 7,
	RSVP_O_CREDIT = 1 << 8,
};

struct rsvp_msg {
	uint8_t type;		/* RSVP_MSG_* */
	uint8_t send_ttl;
	unsigned int objs;	/* RSVP_O_* present (parse) / to write */
	/* SESSION: protocol is UDP and the port 4791, always. */
	struct rsvp_addr dst;
	/* SENDER_TEMPLATE or FILTER_SPEC, same family as dst. */
	struct rsvp_addr src;
	uint16_t sport;
	uint32_t qpn;		/* CBFC_QP, <= DMSC_QPN_MAX */
	struct rsvp_addr hop;	/* RSVP_HOP: the sender of this message */
	uint32_t lih;
	uint32_t refresh_ms;	/* TIME_VALUES, >= 1 */
	/* Credit: RSVP_CTYPE_CREDIT_MB or _CUMULATIVE. */
	uint8_t credit_ctype;
	uint32_t credit_mb;	/* 1..RSVP_CREDIT_MB_MAX */
	uint64_t initial;	/* bytes, <= DMSC_CREDIT_MAX */
	uint64_t freed;		/* bytes, a running total: any u64 */
	/* EXPLICIT_ROUTE: the hops after the receiver, in order. */
	unsigned int nhops;
	struct rsvp_addr hops[RSVP_ERO_HOPS_MAX];
	/* ERROR_SPEC */
	struct rsvp_addr err_node;
	uint8_t err_code;
	uint16_t err_value;
	/* Objects 10bbbbbb / 11bbbbbb skipped as RFC 2205 says (parse). */
	unsigned int ignored;
};

/* The objects a type must carry and those it may carry besides. */
unsigned int rsvp_mandatory(uint8_t type);
unsigned int rsvp_optional(uint8_t type);

/*
 * Write @m (its type's mandatory objects and those of m->objs it may
 * carry) into @buf with the checksum: its length, or -1 with @why set
 * when a field is out of range or @cap too small.
 */
int rsvp_build(const struct rsvp_msg *m, uint8_t *buf, size_t cap,
	       char *why, size_t whylen);

/*
 * Parse one datagram's RSVP message (no IP header). RSVP_OK fills @m;
 * otherwise @why says what and where ("object 3 (Class-Num 124) at
 * offset 40: length 12, C-Type 2 needs 20").
 */
enum rsvp_reason rsvp_parse(const uint8_t *buf, size_t len,
			    struct rsvp_msg *m, char *why, size_t whylen);

/* RFC 1071 sum over @len bytes, as the header carries it. */
uint16_t rsvp_checksum(const uint8_t *buf, size_t len);

/* The credit a RESV grants, in bytes (MB form times 2^20). */
uint64_t rsvp_credit_bytes(const struct rsvp_msg *m);

const char *rsvp_type_name(uint8_t type);

#endif /* DMSC_RSVP_H */
