// SPDX-License-Identifier: GPL-2.0
/*
 * The RSVP-CBFC codec (rsvp.h). Every length is checked before a byte is
 * read; an object's length must be exactly its C-Type's, so a message has
 * one encoding and the build/parse round trip is exact.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/dmsc.h>

#include "rsvp.h"

static const char *const reason_names[RSVP_REASON_COUNT] = {
	[RSVP_OK] = "ok",
	[RSVP_E_SHORT] = "short",
	[RSVP_E_VERSION] = "version",
	[RSVP_E_LENGTH] = "length",
	[RSVP_E_CHECKSUM] = "checksum",
	[RSVP_E_TYPE] = "type",
	[RSVP_E_OBJ_LENGTH] = "object_length",
	[RSVP_E_UNKNOWN_CLASS] = "unknown_class",
	[RSVP_E_UNKNOWN_CTYPE] = "unknown_ctype",
	[RSVP_E_DUPLICATE] = "duplicate",
	[RSVP_E_MISSING] = "missing",
	[RSVP_E_NOT_ALLOWED] = "not_allowed",
	[RSVP_E_VALUE] = "value",
};

const char *rsvp_reason_name(enum rsvp_reason r)
{
	return (unsigned int)r < RSVP_REASON_COUNT ? reason_names[r] : "?";
}

const char *rsvp_type_name(uint8_t type)
{
	switch (type) {
	case RSVP_MSG_CBFC_PATH: return "PATH";
	case RSVP_MSG_CBFC_RESV: return "RESV";
	case RSVP_MSG_PATHTEAR: return "PathTear";
	case RSVP_MSG_PATHERR: return "PathErr";
	}
	return "?";
}

/*
 * RFC 2205 3.1: PATH and RESV carry their SESSION, hop, refresh time and
 * sender or filter; ours add the QP (the session is per RoCEv2 QP) and
 * RESV its Credit. PathErr has no hop (it goes back the way PATH came).
 */
unsigned int rsvp_mandatory(uint8_t type)
{
	const unsigned int flow = RSVP_O_SESSION | RSVP_O_QP;

	switch (type) {
	case RSVP_MSG_CBFC_PATH:
		return flow | RSVP_O_HOP | RSVP_O_TIME | RSVP_O_SENDER;
	case RSVP_MSG_CBFC_RESV:
		return flow | RSVP_O_HOP | RSVP_O_TIME | RSVP_O_FILTER |
		       RSVP_O_CREDIT;
	case RSVP_MSG_PATHTEAR:
		return flow | RSVP_O_HOP | RSVP_O_SENDER;
	case RSVP_MSG_PATHERR:
		return flow | RSVP_O_ERROR | RSVP_O_SENDER;
	}
	return 0;
}

unsigned int rsvp_optional(uint8_t type)
{
	/* The ERO: the hops after the receiver; none at the tail. */
	return type == RSVP_MSG_CBFC_PATH ? RSVP_O_ERO : 0;
}

uint16_t rsvp_checksum(const uint8_t *buf, size_t len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)buf[i] << 8 | buf[i + 1];
	if (len & 1)
		sum += (uint32_t)buf[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

uint64_t rsvp_credit_bytes(const struct rsvp_msg *m)
{
	if (m->credit_ctype == RSVP_CTYPE_CREDIT_MB)
		return (uint64_t)m->credit_mb << 20;
	return m->initial;
}

static void why_set(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void why_set(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (!why || !whylen)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

static unsigned int alen(uint8_t family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

static uint8_t ctype_of(uint8_t family)
{
	return family == AF_INET ? RSVP_CTYPE_IPV4 : RSVP_CTYPE_IPV6;
}

/* ---- build ---- */

struct wbuf {
	uint8_t *p;
	size_t cap, len;
	bool overflow;
};

static uint8_t *w_obj(struct wbuf *w, uint8_t cls, uint8_t ctype,
		      size_t body)
{
	size_t total = RSVP_OBJ_HDR_LEN + body;
	uint8_t *o;

	if (w->overflow || w->len + total > w->cap) {
		w->overflow = true;
		return NULL;
	}
	o = w->p + w->len;
	memset(o, 0, total);
	o[0] = total >> 8;
	o[1] = total & 0xff;
	o[2] = cls;
	o[3] = ctype;
	w->len += total;
	return o + RSVP_OBJ_HDR_LEN;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* An address and a 4-byte word after it: SESSION, HOP, SENDER, ERROR. */
static uint8_t *w_addr_obj(struct wbuf *w, uint8_t cls,
			   const struct rsvp_addr *a)
{
	uint8_t *o = w_obj(w, cls, ctype_of(a->family), alen(a->family) + 4);

	if (o)
		memcpy(o, a->a, alen(a->family));
	return o ? o + alen(a->family) : NULL;
}

/* The values rsvp_parse() refuses, refused before writing them. */
static int check_values(const struct rsvp_msg *m, unsigned int objs,
			char *why, size_t whylen)
{
	unsigned int i;

	if (!alen(m->dst.family)) {
		why_set(why, whylen, "SESSION: family %u", m->dst.family);
		return -1;
	}
	if ((objs & (RSVP_O_SENDER | RSVP_O_FILTER)) &&
	    m->src.family != m->dst.family) {
		why_set(why, whylen, "sender: family differs from SESSION");
		return -1;
	}
	if ((objs & RSVP_O_HOP) && !alen(m->hop.family)) {
		why_set(why, whylen, "RSVP_HOP: family %u", m->hop.family);
		return -1;
	}
	if ((objs & RSVP_O_ERROR) && !alen(m->err_node.family)) {
		why_set(why, whylen, "ERROR_SPEC: family %u",
			m->err_node.family);
		return -1;
	}
	if (m->qpn > DMSC_QPN_MAX) {
		why_set(why, whylen, "QP %u: over %u", m->qpn, DMSC_QPN_MAX);
		return -1;
	}
	if ((objs & RSVP_O_TIME) && !m->refresh_ms) {
		why_set(why, whylen, "TIME_VALUES: refresh 0");
		return -1;
	}
	if (objs & RSVP_O_CREDIT) {
		if (m->credit_ctype == RSVP_CTYPE_CREDIT_MB) {
			if (!m->credit_mb || m->credit_mb > RSVP_CREDIT_MB_MAX) {
				why_set(why, whylen, "Credit: %u MB out of 1..%u",
					m->credit_mb, RSVP_CREDIT_MB_MAX);
				return -1;
			}
		} else if (m->credit_ctype == RSVP_CTYPE_CREDIT_CUMULATIVE) {
			/* freed is a running total: any u64. */
			if (m->initial > DMSC_CREDIT_MAX) {
				why_set(why, whylen, "Credit: initial %llu out of range",
					(unsigned long long)m->initial);
				return -1;
			}
		} else {
			why_set(why, whylen, "Credit: C-Type %u",
				m->credit_ctype);
			return -1;
		}
	}
	if ((objs & RSVP_O_ERO) && m->nhops > RSVP_ERO_HOPS_MAX) {
		why_set(why, whylen, "ERO: %u hops", m->nhops);
		return -1;
	}
	for (i = 0; (objs & RSVP_O_ERO) && i < m->nhops; i++) {
		if (!alen(m->hops[i].family)) {
			why_set(why, whylen, "ERO hop %u: family %u", i,
				m->hops[i].family);
			return -1;
		}
	}
	return 0;
}

int rsvp_build(const struct rsvp_msg *m, uint8_t *buf, size_t cap,
	       char *why, size_t whylen)
{
	unsigned int objs, i;
	struct wbuf w = { .p = buf, .cap = cap };
	uint16_t ck;
	uint8_t *o;
	size_t sub;

	objs = rsvp_mandatory(m->type);
	if (!objs) {
		why_set(why, whylen, "message type %u", m->type);
		return -1;
	}
	objs |= m->objs & rsvp_optional(m->type);
	if (check_values(m, objs, why, whylen))
		return -1;
	if (cap < RSVP_HDR_LEN) {
		why_set(why, whylen, "buffer of %zu bytes", cap);
		return -1;
	}
	memset(buf, 0, RSVP_HDR_LEN);
	w.len = RSVP_HDR_LEN;

	o = w_addr_obj(&w, RSVP_CLASS_SESSION, &m->dst);
	if (o) {
		o[0] = 17;		/* UDP */
		put16(o + 2, RSVP_ROCE_PORT);
	}
	if ((objs & RSVP_O_HOP) && (o = w_addr_obj(&w, RSVP_CLASS_RSVP_HOP,
						   &m->hop)))
		put32(o, m->lih);
	if ((objs & RSVP_O_TIME) &&
	    (o = w_obj(&w, RSVP_CLASS_TIME_VALUES, 1, 4)))
		put32(o, m->refresh_ms);
	if ((objs & RSVP_O_ERROR) &&
	    (o = w_addr_obj(&w, RSVP_CLASS_ERROR_SPEC, &m->err_node))) {
		o[1] = m->err_code;
		put16(o + 2, m->err_value);
	}
	if (objs & RSVP_O_ERO) {
		for (sub = 0, i = 0; i < m->nhops; i++)
			sub += m->hops[i].family == AF_INET ? 8 : 20;
		o = w_obj(&w, RSVP_CLASS_EXPLICIT_ROUTE, RSVP_CTYPE_ERO, sub);
		for (i = 0; o && i < m->nhops; i++) {
			bool v4 = m->hops[i].family == AF_INET;

			/* Strict hops (L bit 0), host prefixes. */
			o[0] = v4 ? RSVP_ERO_SUB_IPV4 : RSVP_ERO_SUB_IPV6;
			o[1] = v4 ? 8 : 20;
			memcpy(o + 2, m->hops[i].a, v4 ? 4 : 16);
			o[v4 ? 6 : 18] = v4 ? 32 : 128;
			o += v4 ? 8 : 20;
		}
	}
	if ((o = w_obj(&w, RSVP_CLASS_CBFC_QP, RSVP_CTYPE_QP, 8))) {
		put32(o, RSVP_CBFC_ENTERPRISE);
		put32(o + 4, m->qpn);
	}
	if (objs & RSVP_O_CREDIT) {
		bool mb = m->credit_ctype == RSVP_CTYPE_CREDIT_MB;

		o = w_obj(&w, RSVP_CLASS_CBFC_CREDIT, m->credit_ctype,
			  mb ? 8 : 20);
		if (o) {
			put32(o, RSVP_CBFC_ENTERPRISE);
			o += 4;
		}
		if (o && mb) {
			put32(o, m->credit_mb);
		} else if (o) {
			put64(o, m->initial);
			put64(o + 8, m->freed);
		}
	}
	o = w_addr_obj(&w, (objs & RSVP_O_FILTER) ? RSVP_CLASS_FILTER_SPEC :
		       RSVP_CLASS_SENDER_TEMPLATE, &m->src);
	if (o)
		put16(o + 2, m->sport);
	if (w.overflow || w.len > RSVP_MSG_MAX) {
		why_set(why, whylen, "message does not fit %zu bytes", cap);
		return -1;
	}
	buf[0] = RSVP_VERSION << 4;
	buf[1] = m->type;
	buf[4] = m->send_ttl;
	put16(buf + 6, (uint16_t)w.len);
	/*
	 * 0 says "no checksum" (RFC 2205) and is refused below; a sum that
	 * folds to 0 goes out as 0xffff, its one's complement twin, as UDP
	 * does (1 message in 65,535 would otherwise be lost for good).
	 */
	ck = rsvp_checksum(buf, w.len);
	put16(buf + 2, ck ? ck : 0xffff);
	return (int)w.len;
}

/* ---- parse ---- */

/* An address object: C-Type 1 (IPv4) or 2 (IPv6) of 4 + @tail bytes. */
static enum rsvp_reason p_addr(const uint8_t *body, size_t blen,
			       uint8_t ctype, size_t tail,
			       struct rsvp_addr *a, const uint8_t **rest)
{
	unsigned int n;

	if (ctype == RSVP_CTYPE_IPV4)
		a->family = AF_INET;
	else if (ctype == RSVP_CTYPE_IPV6)
		a->family = AF_INET6;
	else
		return RSVP_E_UNKNOWN_CTYPE;
	n = alen(a->family);
	if (blen != n + tail)
		return RSVP_E_OBJ_LENGTH;
	memset(a->a, 0, sizeof(a->a));
	memcpy(a->a, body, n);
	*rest = body + n;
	return RSVP_OK;
}

static enum rsvp_reason p_ero(const uint8_t *b, size_t blen,
			      struct rsvp_msg *m, char *why, size_t whylen)
{
	size_t off = 0;

	m->nhops = 0;
	while (off < blen) {
		uint8_t type, len;
		bool v4;

		if (blen - off < 2) {
			why_set(why, whylen, "ERO: subobject header cut at %zu",
				off);
			return RSVP_E_OBJ_LENGTH;
		}
		type = b[off] & 0x7f;
		len = b[off + 1];
		if (type != RSVP_ERO_SUB_IPV4 && type != RSVP_ERO_SUB_IPV6) {
			why_set(why, whylen, "ERO: subobject type %u", type);
			return RSVP_E_VALUE;
		}
		v4 = type == RSVP_ERO_SUB_IPV4;
		if (len != (v4 ? 8 : 20) || blen - off < len) {
			why_set(why, whylen, "ERO: subobject %u length %u",
				m->nhops, len);
			return RSVP_E_OBJ_LENGTH;
		}
		/* Strict host hops only: each hop is a node's address. */
		if ((b[off] & 0x80) || b[off + (v4 ? 6 : 18)] != (v4 ? 32 : 128) ||
		    b[off + (v4 ? 7 : 19)]) {
			why_set(why, whylen, "ERO: subobject %u not a strict host hop",
				m->nhops);
			return RSVP_E_VALUE;
		}
		if (m->nhops == RSVP_ERO_HOPS_MAX) {
			why_set(why, whylen, "ERO: over %u hops",
				RSVP_ERO_HOPS_MAX);
			return RSVP_E_VALUE;
		}
		m->hops[m->nhops].family = v4 ? AF_INET : AF_INET6;
		memset(m->hops[m->nhops].a, 0, 16);
		memcpy(m->hops[m->nhops].a, b + off + 2, v4 ? 4 : 16);
		m->nhops++;
		off += len;
	}
	return RSVP_OK;
}

/* One object's body into @m; the bit it sets in *@bit. */
static enum rsvp_reason p_object(uint8_t cls, uint8_t ctype,
				 const uint8_t *b, size_t blen,
				 struct rsvp_msg *m, unsigned int *bit,
				 char *why, size_t whylen)
{
	struct rsvp_addr a;
	const uint8_t *r;
	enum rsvp_reason e;

	switch (cls) {
	case RSVP_CLASS_SESSION:
		*bit = RSVP_O_SESSION;
		if ((e = p_addr(b, blen, ctype, 4, &m->dst, &r)))
			return e;
		/* A cbfc session is a RoCEv2 flow: UDP to 4791. */
		if (r[0] != 17 || get16(r + 2) != RSVP_ROCE_PORT || r[1]) {
			why_set(why, whylen, "SESSION: protocol %u port %u flags %u, not UDP 4791",
				r[0], get16(r + 2), r[1]);
			return RSVP_E_VALUE;
		}
		return RSVP_OK;
	case RSVP_CLASS_RSVP_HOP:
		*bit = RSVP_O_HOP;
		if ((e = p_addr(b, blen, ctype, 4, &m->hop, &r)))
			return e;
		m->lih = get32(r);
		return RSVP_OK;
	case RSVP_CLASS_TIME_VALUES:
		*bit = RSVP_O_TIME;
		if (ctype != 1)
			return RSVP_E_UNKNOWN_CTYPE;
		if (blen != 4)
			return RSVP_E_OBJ_LENGTH;
		m->refresh_ms = get32(b);
		if (!m->refresh_ms) {
			why_set(why, whylen, "TIME_VALUES: refresh 0");
			return RSVP_E_VALUE;
		}
		return RSVP_OK;
	case RSVP_CLASS_ERROR_SPEC:
		*bit = RSVP_O_ERROR;
		if ((e = p_addr(b, blen, ctype, 4, &m->err_node, &r)))
			return e;
		m->err_code = r[1];
		m->err_value = get16(r + 2);
		return RSVP_OK;
	case RSVP_CLASS_SENDER_TEMPLATE:
	case RSVP_CLASS_FILTER_SPEC:
		*bit = cls == RSVP_CLASS_FILTER_SPEC ? RSVP_O_FILTER :
		       RSVP_O_SENDER;
		if ((e = p_addr(b, blen, ctype, 4, &a, &r)))
			return e;
		m->src = a;
		m->sport = get16(r + 2);
		return RSVP_OK;
	case RSVP_CLASS_EXPLICIT_ROUTE:
		*bit = RSVP_O_ERO;
		if (ctype != RSVP_CTYPE_ERO)
			return RSVP_E_UNKNOWN_CTYPE;
		return p_ero(b, blen, m, why, whylen);
	case RSVP_CLASS_CBFC_QP:
	case RSVP_CLASS_CBFC_CREDIT:
		/* RFC 6411: another enterprise's object is one we do not know. */
		if (blen < 4 || get32(b) != RSVP_CBFC_ENTERPRISE) {
			if (blen >= 4)
				return RSVP_E_UNKNOWN_CLASS;
			*bit = 0;
			return RSVP_E_OBJ_LENGTH;
		}
		b += 4;
		blen -= 4;
		break;
	}
	switch (cls) {
	case RSVP_CLASS_CBFC_QP:
		*bit = RSVP_O_QP;
		if (ctype != RSVP_CTYPE_QP)
			return RSVP_E_UNKNOWN_CTYPE;
		if (blen != 4)
			return RSVP_E_OBJ_LENGTH;
		m->qpn = get32(b);
		if (m->qpn > DMSC_QPN_MAX) {
			why_set(why, whylen, "QP: %u over %u", m->qpn,
				DMSC_QPN_MAX);
			return RSVP_E_VALUE;
		}
		return RSVP_OK;
	case RSVP_CLASS_CBFC_CREDIT:
		*bit = RSVP_O_CREDIT;
		m->credit_ctype = ctype;
		if (ctype == RSVP_CTYPE_CREDIT_MB) {
			if (blen != 4)
				return RSVP_E_OBJ_LENGTH;
			m->credit_mb = get32(b);
			if (!m->credit_mb || m->credit_mb > RSVP_CREDIT_MB_MAX) {
				why_set(why, whylen, "Credit: %u MB out of 1..%u",
					m->credit_mb, RSVP_CREDIT_MB_MAX);
				return RSVP_E_VALUE;
			}
			return RSVP_OK;
		}
		if (ctype != RSVP_CTYPE_CREDIT_CUMULATIVE)
			return RSVP_E_UNKNOWN_CTYPE;
		if (blen != 16)
			return RSVP_E_OBJ_LENGTH;
		m->initial = get64(b);
		m->freed = get64(b + 8);
		/* freed is a running total (any u64, compared wrap-safely). */
		if (m->initial > DMSC_CREDIT_MAX) {
			why_set(why, whylen, "Credit: initial %llu (max %llu)",
				(unsigned long long)m->initial,
				(unsigned long long)DMSC_CREDIT_MAX);
			return RSVP_E_VALUE;
		}
		return RSVP_OK;
	}
	*bit = 0;
	return RSVP_E_UNKNOWN_CLASS;
}

static const char *const obj_names[] = {
	"SESSION", "RSVP_HOP", "TIME_VALUES", "ERROR_SPEC",
	"SENDER_TEMPLATE", "FILTER_SPEC", "EXPLICIT_ROUTE", "QP", "Credit",
};

enum rsvp_reason rsvp_parse(const uint8_t *buf, size_t len,
			    struct rsvp_msg *m, char *why, size_t whylen)
{
	unsigned int mand, allowed, n = 0, i;
	uint16_t hlen, ck;
	size_t off;

	memset(m, 0, sizeof(*m));
	why_set(why, whylen, "ok");
	if (len < RSVP_HDR_LEN) {
		why_set(why, whylen, "%zu bytes, a header is %u", len,
			RSVP_HDR_LEN);
		return RSVP_E_SHORT;
	}
	if (buf[0] >> 4 != RSVP_VERSION) {
		why_set(why, whylen, "version %u", buf[0] >> 4);
		return RSVP_E_VERSION;
	}
	hlen = get16(buf + 6);
	if (hlen != len || len > RSVP_MSG_MAX) {
		why_set(why, whylen, "header length %u, datagram %zu (max %u)",
			hlen, len, RSVP_MSG_MAX);
		return RSVP_E_LENGTH;
	}
	/* We always send one: 0 ("none sent", RFC 2205) is refused too. */
	ck = get16(buf + 2);
	if (!ck || rsvp_checksum(buf, len)) {
		why_set(why, whylen, "checksum 0x%04x wrong", ck);
		return RSVP_E_CHECKSUM;
	}
	m->type = buf[1];
	m->send_ttl = buf[4];
	mand = rsvp_mandatory(m->type);
	if (!mand) {
		why_set(why, whylen, "message type %u", m->type);
		return RSVP_E_TYPE;
	}
	allowed = mand | rsvp_optional(m->type);
	for (off = RSVP_HDR_LEN; off < len; n++) {
		uint16_t olen;
		uint8_t cls, ctype;
		unsigned int bit = 0;
		enum rsvp_reason e;

		if (len - off < RSVP_OBJ_HDR_LEN) {
			why_set(why, whylen, "object %u at offset %zu: header cut",
				n, off);
			return RSVP_E_OBJ_LENGTH;
		}
		olen = get16(buf + off);
		cls = buf[off + 2];
		ctype = buf[off + 3];
		if (olen < RSVP_OBJ_HDR_LEN || olen % 4 || olen > len - off) {
			why_set(why, whylen, "object %u (Class-Num %u) at offset %zu: length %u",
				n, cls, off, olen);
			return RSVP_E_OBJ_LENGTH;
		}
		e = p_object(cls, ctype, buf + off + RSVP_OBJ_HDR_LEN,
			     olen - RSVP_OBJ_HDR_LEN, m, &bit, why, whylen);
		if (e == RSVP_E_UNKNOWN_CLASS) {
			/*
			 * RFC 2205 3.10: 0bbbbbbb refuse the message;
			 * 10bbbbbb ignore; 11bbbbbb ignore here (we do not
			 * forward objects we cannot read: counted).
			 */
			if (!(cls & 0x80)) {
				why_set(why, whylen, "object %u: unknown Class-Num %u",
					n, cls);
				return e;
			}
			m->ignored++;
			off += olen;
			continue;
		}
		if (e == RSVP_E_OBJ_LENGTH || e == RSVP_E_UNKNOWN_CTYPE) {
			why_set(why, whylen, "object %u (Class-Num %u, C-Type %u) at offset %zu: %s %u",
				n, cls, ctype, off,
				e == RSVP_E_OBJ_LENGTH ? "wrong length" :
				"unknown C-Type", e == RSVP_E_OBJ_LENGTH ?
				olen : ctype);
			return e;
		}
		if (e)
			return e;
		if (m->objs & bit) {
			why_set(why, whylen, "object %u: second Class-Num %u",
				n, cls);
			return RSVP_E_DUPLICATE;
		}
		if (!(allowed & bit)) {
			why_set(why, whylen, "object %u: Class-Num %u not in %s",
				n, cls, rsvp_type_name(m->type));
			return RSVP_E_NOT_ALLOWED;
		}
		m->objs |= bit;
		off += olen;
	}
	for (i = 0; i < sizeof(obj_names) / sizeof(obj_names[0]); i++) {
		if ((mand & (1u << i)) && !(m->objs & (1u << i))) {
			why_set(why, whylen, "%s: no %s", rsvp_type_name(m->type),
				obj_names[i]);
			return RSVP_E_MISSING;
		}
	}
	if (m->src.family != m->dst.family) {
		why_set(why, whylen, "sender family %u, SESSION's %u",
			m->src.family, m->dst.family);
		return RSVP_E_VALUE;
	}
	return RSVP_OK;
}
