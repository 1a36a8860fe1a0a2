// SPDX-License-Identifier: GPL-2.0
/* Type 6 (msg_policy.h): policies in JSON, both ways, strictly. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg_policy.h"

static const char *const policy_msg_keys[] = {
	"rev", "full", "term", "epoch", "policies", NULL,
};
static const char *const policy_keys[] = {
	"name", "node", "tunnel", "src", "paths", "backup", "rules", "credit",
	NULL,
};
static const char *const credit_keys[] = {
	"src", "dst", "sport", "qpn", "path", "backup", NULL,
};
static const char *const path_keys[] = { "segs", "weight", NULL };
static const char *const rule_keys[] = { "dst", "src", "qpn", "tunnel", NULL };

static int fail(char *err, size_t errlen, const char *path, const char *what,
		const char *val)
{
	snprintf(err, errlen, "%s: %s%s%s%s", path, what, val ? " \"" : "",
		 val ? val : "", val ? "\"" : "");
	return -1;
}

static int segs_get(struct json_object *arr, const char *path,
		    struct pol_path *p, char *err, size_t errlen)
{
	char sub[128];
	size_t n;

	if (!json_object_is_type(arr, json_type_array))
		return fail(err, errlen, path, "expected an array of SIDs", NULL);
	n = json_object_array_length(arr);
	if (!n || n > DMSC_MAX_SEGS) {
		snprintf(err, errlen, "%s: 1..%d SIDs", path, DMSC_MAX_SEGS);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(arr, i);

		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		if (!json_object_is_type(s, json_type_string) ||
		    inet_pton(AF_INET6, json_object_get_string(s), &p->segs[i]) != 1)
			return fail(err, errlen, sub, "not an IPv6 address",
				    json_object_get_string(s));
	}
	p->nsegs = (uint32_t)n;
	return 0;
}

static struct json_object *segs_json(const struct pol_path *p)
{
	struct json_object *a = json_object_new_array();
	char buf[INET6_ADDRSTRLEN];

	for (uint32_t i = 0; i < p->nsegs; i++)
		json_object_array_add(a, json_object_new_string(
			inet_ntop(AF_INET6, &p->segs[i], buf, sizeof(buf))));
	return a;
}

/* "ADDR/LEN" with no host bits past LEN; @family 0 = either. */
static int prefix_get(const char *s, const char *path, uint8_t *family,
		      uint8_t *addr, uint8_t *len, char *err, size_t errlen)
{
	char a[64], *slash;
	unsigned long l;
	int af, max;

	snprintf(a, sizeof(a), "%s", s);
	slash = strchr(a, '/');
	if (slash)
		*slash++ = '\0';
	af = strchr(a, ':') ? AF_INET6 : AF_INET;
	max = af == AF_INET ? 32 : 128;
	memset(addr, 0, 16);
	if (inet_pton(af, a, addr) != 1)
		return fail(err, errlen, path, "not an address/length", s);
	l = slash ? strtoul(slash, &slash, 10) : (unsigned long)max;
	if ((slash && *slash) || l > (unsigned long)max)
		return fail(err, errlen, path, "bad prefix length in", s);
	for (int b = (int)l; b < max; b++)
		if (addr[b / 8] & (0x80 >> (b % 8)))
			return fail(err, errlen, path, "host bits set past the length in", s);
	if (*family && *family != af)
		return fail(err, errlen, path, "not of the family of dst:", s);
	*family = (uint8_t)af;
	*len = (uint8_t)l;
	return 0;
}

int pol_rule_from_json(struct json_object *o, const char *path,
		       struct pol_rule *r, char *err, size_t errlen)
{
	struct json_object *v;
	char sub[128];
	uint64_t t;

	memset(r, 0, sizeof(*r));
	r->qpn_hi = DMSC_QPN_MAX;
	if (!json_object_is_type(o, json_type_object))
		return fail(err, errlen, path, "expected an object", NULL);
	if (msg_keys_only(o, path, rule_keys, NULL, err, errlen))
		return -1;
	snprintf(sub, sizeof(sub), "%s.dst", path);
	if (!json_object_object_get_ex(o, "dst", &v))
		return fail(err, errlen, sub, "required", NULL);
	if (!json_object_is_type(v, json_type_string) ||
	    prefix_get(json_object_get_string(v), sub, &r->family, r->dst,
		       &r->dst_len, err, errlen))
		return json_object_is_type(v, json_type_string) ? -1 :
		       fail(err, errlen, sub, "expected a string", NULL);
	snprintf(sub, sizeof(sub), "%s.src", path);
	if (json_object_object_get_ex(o, "src", &v) &&
	    (!json_object_is_type(v, json_type_string) ||
	     prefix_get(json_object_get_string(v), sub, &r->family, r->src,
			&r->src_len, err, errlen)))
		return json_object_is_type(v, json_type_string) ? -1 :
		       fail(err, errlen, sub, "expected a string", NULL);
	snprintf(sub, sizeof(sub), "%s.qpn", path);
	if (json_object_object_get_ex(o, "qpn", &v)) {
		const char *s = json_object_get_string(v);
		char *end;

		if (!json_object_is_type(v, json_type_string))
			return fail(err, errlen, sub, "expected \"N\" or \"LO-HI\"", NULL);
		r->qpn_lo = (uint32_t)strtoul(s, &end, 10);
		r->qpn_hi = r->qpn_lo;
		if (end != s && *end == '-')
			r->qpn_hi = (uint32_t)strtoul(s = end + 1, &end, 10);
		if (end == s || *end || r->qpn_lo > r->qpn_hi ||
		    r->qpn_hi > DMSC_QPN_MAX)
			return fail(err, errlen, sub, "not N or LO-HI within 0..16777215:",
				    json_object_get_string(v));
	}
	/* in the SR's state file a rule names its tunnel; in a policy, the policy does */
	if (json_object_object_get_ex(o, "tunnel", NULL)) {
		if (msg_get_u64(o, path, "tunnel", UINT32_MAX, &t, err, errlen))
			return -1;
		r->tunnel = (uint32_t)t;
	}
	return 0;
}

static void prefix_text(int family, const uint8_t *a, uint8_t len, char *buf,
			size_t size)
{
	char t[INET6_ADDRSTRLEN];

	inet_ntop(family, a, t, sizeof(t));
	snprintf(buf, size, "%s/%u", t, len);
}

struct json_object *pol_rule_json(const struct pol_rule *r)
{
	struct json_object *o = json_object_new_object();
	char buf[INET6_ADDRSTRLEN + 8];

	prefix_text(r->family, r->dst, r->dst_len, buf, sizeof(buf));
	json_object_object_add(o, "dst", json_object_new_string(buf));
	if (r->src_len) {
		prefix_text(r->family, r->src, r->src_len, buf, sizeof(buf));
		json_object_object_add(o, "src", json_object_new_string(buf));
	}
	if (r->qpn_lo || r->qpn_hi != DMSC_QPN_MAX) {
		snprintf(buf, sizeof(buf), "%u-%u", r->qpn_lo, r->qpn_hi);
		json_object_object_add(o, "qpn", json_object_new_string(buf));
	}
	if (r->tunnel)
		json_object_object_add(o, "tunnel", json_object_new_uint64(r->tunnel));
	return o;
}

/* An IPv4 or IPv6 address, its family by its form. */
static int addr_get(struct json_object *v, const char *path,
		    struct rsvp_addr *a, char *err, size_t errlen)
{
	const char *s = json_object_is_type(v, json_type_string) ?
			json_object_get_string(v) : NULL;

	memset(a, 0, sizeof(*a));
	if (!s)
		return fail(err, errlen, path, "expected an address", NULL);
	a->family = strchr(s, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(a->family, s, a->a) != 1)
		return fail(err, errlen, path, "not an IPv4 or IPv6 address", s);
	return 0;
}

static int hops_get(struct json_object *arr, const char *path,
		    struct rsvp_addr *hops, uint32_t *n, char *err,
		    size_t errlen)
{
	char sub[192];
	size_t len;

	if (!json_object_is_type(arr, json_type_array))
		return fail(err, errlen, path, "expected an array of hop addresses",
			    NULL);
	len = json_object_array_length(arr);
	if (!len || len > POLICY_HOPS_MAX) {
		snprintf(err, errlen, "%s: 1..%d hops", path, POLICY_HOPS_MAX);
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		if (addr_get(json_object_array_get_idx(arr, i), sub, &hops[i],
			     err, errlen))
			return -1;
	}
	*n = (uint32_t)len;
	return 0;
}

static int credit_from_json(struct json_object *o, const char *path,
			    struct pol_credit *c, char *err, size_t errlen)
{
	struct json_object *v;
	char sub[160];
	uint64_t u;

	if (!json_object_is_type(o, json_type_object))
		return fail(err, errlen, path, "expected an object", NULL);
	if (msg_keys_only(o, path, credit_keys, NULL, err, errlen))
		return -1;
	snprintf(sub, sizeof(sub), "%s.src", path);
	if (!json_object_object_get_ex(o, "src", &v))
		return fail(err, errlen, sub, "required", NULL);
	if (addr_get(v, sub, &c->flow.src, err, errlen))
		return -1;
	snprintf(sub, sizeof(sub), "%s.dst", path);
	if (!json_object_object_get_ex(o, "dst", &v))
		return fail(err, errlen, sub, "required", NULL);
	if (addr_get(v, sub, &c->flow.dst, err, errlen))
		return -1;
	if (c->flow.src.family != c->flow.dst.family)
		return fail(err, errlen, sub, "not of src's family", NULL);
	if (msg_get_u64(o, path, "sport", UINT16_MAX, &u, err, errlen))
		return -1;
	c->flow.sport = (uint16_t)u;
	if (msg_get_u64(o, path, "qpn", DMSC_QPN_MAX, &u, err, errlen))
		return -1;
	c->flow.qpn = (uint32_t)u;
	snprintf(sub, sizeof(sub), "%s.path", path);
	if (!json_object_object_get_ex(o, "path", &v))
		return fail(err, errlen, sub, "required", NULL);
	if (hops_get(v, sub, c->path, &c->npath, err, errlen))
		return -1;
	snprintf(sub, sizeof(sub), "%s.backup", path);
	if (json_object_object_get_ex(o, "backup", &v) &&
	    hops_get(v, sub, c->backup, &c->nbackup, err, errlen))
		return -1;
	return 0;
}

static const char *addr_text(const struct rsvp_addr *a, char *buf,
			     size_t len)
{
	return inet_ntop(a->family, a->a, buf, len) ? buf : "-";
}

static struct json_object *hops_json(const struct rsvp_addr *h, uint32_t n)
{
	struct json_object *a = json_object_new_array();
	char buf[INET6_ADDRSTRLEN];

	for (uint32_t i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_string(
			addr_text(&h[i], buf, sizeof(buf))));
	return a;
}

static struct json_object *credit_json(const struct pol_credit *c)
{
	struct json_object *o = json_object_new_object();
	char buf[INET6_ADDRSTRLEN];

	json_object_object_add(o, "src", json_object_new_string(
		addr_text(&c->flow.src, buf, sizeof(buf))));
	json_object_object_add(o, "dst", json_object_new_string(
		addr_text(&c->flow.dst, buf, sizeof(buf))));
	json_object_object_add(o, "sport", json_object_new_uint64(c->flow.sport));
	json_object_object_add(o, "qpn", json_object_new_uint64(c->flow.qpn));
	json_object_object_add(o, "path", hops_json(c->path, c->npath));
	if (c->nbackup)
		json_object_object_add(o, "backup",
				       hops_json(c->backup, c->nbackup));
	return o;
}

int policy_from_json(struct json_object *o, const char *path,
		     struct policy *p, char *err, size_t errlen)
{
	struct json_object *v, *arr;
	char sub[128];
	uint64_t u;
	size_t n;

	memset(p, 0, sizeof(*p));
	if (!json_object_is_type(o, json_type_object))
		return fail(err, errlen, path, "expected an object", NULL);
	if (msg_keys_only(o, path, policy_keys, NULL, err, errlen) ||
	    msg_get_string(o, path, "name", p->name, sizeof(p->name), err, errlen) ||
	    msg_get_string(o, path, "node", p->node, sizeof(p->node), err, errlen) ||
	    msg_get_u64(o, path, "tunnel", UINT32_MAX, &u, err, errlen))
		return -1;
	p->tunnel = (uint32_t)u;
	snprintf(sub, sizeof(sub), "%s.tunnel", path);
	if (!p->tunnel)
		return fail(err, errlen, sub, "must not be 0", NULL);
	snprintf(sub, sizeof(sub), "%s.src", path);
	if (!json_object_object_get_ex(o, "src", &v))
		return fail(err, errlen, sub, "required", NULL);
	if (!json_object_is_type(v, json_type_string) ||
	    inet_pton(AF_INET6, json_object_get_string(v), &p->src) != 1)
		return fail(err, errlen, sub, "not an IPv6 address",
			    json_object_get_string(v));
	if (msg_get_array(o, path, "paths", DMSC_MAX_PATHS, &arr, err, errlen))
		return -1;
	n = json_object_array_length(arr);
	snprintf(sub, sizeof(sub), "%s.paths", path);
	if (!n)
		return fail(err, errlen, sub, "at least one is required", NULL);
	for (size_t i = 0; i < n; i++) {
		struct json_object *x = json_object_array_get_idx(arr, i), *s;
		struct pol_path *pp = &p->paths[i];

		snprintf(sub, sizeof(sub), "%s.paths[%zu]", path, i);
		if (!json_object_is_type(x, json_type_object))
			return fail(err, errlen, sub, "expected an object", NULL);
		if (msg_keys_only(x, sub, path_keys, NULL, err, errlen))
			return -1;
		pp->weight = 1;
		if (json_object_object_get_ex(x, "weight", NULL)) {
			if (msg_get_u64(x, sub, "weight", DMSC_MAX_WEIGHT, &u, err,
					errlen))
				return -1;
			if (!u)
				return fail(err, errlen, sub, "weight must be 1..65535", NULL);
			pp->weight = (uint32_t)u;
		}
		snprintf(sub, sizeof(sub), "%s.paths[%zu].segs", path, i);
		if (!json_object_object_get_ex(x, "segs", &s))
			return fail(err, errlen, sub, "required", NULL);
		if (segs_get(s, sub, pp, err, errlen))
			return -1;
	}
	p->npaths = (uint32_t)n;
	snprintf(sub, sizeof(sub), "%s.backup", path);
	if (json_object_object_get_ex(o, "backup", &v) &&
	    segs_get(v, sub, &p->backup, err, errlen))
		return -1;
	if (json_object_object_get_ex(o, "rules", NULL)) {
		if (msg_get_array(o, path, "rules", POLICY_RULES_MAX, &arr, err,
				  errlen))
			return -1;
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			snprintf(sub, sizeof(sub), "%s.rules[%zu]", path, i);
			if (pol_rule_from_json(json_object_array_get_idx(arr, i), sub,
					       &p->rules[i], err, errlen))
				return -1;
			if (p->rules[i].tunnel && p->rules[i].tunnel != p->tunnel)
				return fail(err, errlen, sub,
					    "a rule steers into its policy's tunnel", NULL);
			p->rules[i].tunnel = p->tunnel;
			for (size_t j = 0; j < i; j++)
				if (pol_rule_key_eq(&p->rules[i], &p->rules[j]))
					return fail(err, errlen, sub, "the same as an earlier rule", NULL);
		}
		p->nrules = (uint32_t)json_object_array_length(arr);
	}
	if (json_object_object_get_ex(o, "credit", NULL)) {
		if (msg_get_array(o, path, "credit", POLICY_CREDIT_MAX, &arr, err,
				  errlen))
			return -1;
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			snprintf(sub, sizeof(sub), "%s.credit[%zu]", path, i);
			if (credit_from_json(json_object_array_get_idx(arr, i), sub,
					     &p->credit[i], err, errlen))
				return -1;
			for (size_t j = 0; j < i; j++)
				if (rsvp_flow_eq(&p->credit[i].flow,
						 &p->credit[j].flow))
					return fail(err, errlen, sub, "the same flow as an earlier one", NULL);
		}
		p->ncredit = (uint32_t)json_object_array_length(arr);
	}
	return 0;
}

struct json_object *policy_json(const struct policy *p)
{
	struct json_object *o = json_object_new_object(), *a;
	char buf[INET6_ADDRSTRLEN];

	if (p->name[0])
		json_object_object_add(o, "name", json_object_new_string(p->name));
	if (p->node[0])
		json_object_object_add(o, "node", json_object_new_string(p->node));
	json_object_object_add(o, "tunnel", json_object_new_uint64(p->tunnel));
	json_object_object_add(o, "src", json_object_new_string(
		inet_ntop(AF_INET6, &p->src, buf, sizeof(buf))));
	a = json_object_new_array();
	for (uint32_t i = 0; i < p->npaths; i++) {
		struct json_object *x = json_object_new_object();

		json_object_object_add(x, "segs", segs_json(&p->paths[i]));
		json_object_object_add(x, "weight", json_object_new_uint64(p->paths[i].weight));
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "paths", a);
	if (p->backup.nsegs)
		json_object_object_add(o, "backup", segs_json(&p->backup));
	a = json_object_new_array();
	for (uint32_t i = 0; i < p->nrules; i++) {
		struct pol_rule r = p->rules[i];

		r.tunnel = 0;	/* the policy's */
		json_object_array_add(a, pol_rule_json(&r));
	}
	json_object_object_add(o, "rules", a);
	if (p->ncredit) {
		a = json_object_new_array();
		for (uint32_t i = 0; i < p->ncredit; i++)
			json_object_array_add(a, credit_json(&p->credit[i]));
		json_object_object_add(o, "credit", a);
	}
	return o;
}

int policy_array_parse(struct json_object *arr, const char *path,
		       struct policy **out, size_t *n, char *err,
		       size_t errlen)
{
	struct policy *p;
	char sub[128];
	size_t len;

	*out = NULL;
	*n = 0;
	if (!json_object_is_type(arr, json_type_array))
		return fail(err, errlen, path, "expected an array", NULL);
	len = json_object_array_length(arr);
	if (len > MSG_POLICIES_MAX) {
		snprintf(err, errlen, "%s: more than %d policies", path, MSG_POLICIES_MAX);
		return -1;
	}
	p = calloc(len ? len : 1, sizeof(*p));
	if (!p)
		return fail(err, errlen, path, "out of memory", NULL);
	for (size_t i = 0; i < len; i++) {
		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		if (policy_from_json(json_object_array_get_idx(arr, i), sub, &p[i],
				     err, errlen))
			goto bad;
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(p[i].name, p[j].name)) {
				fail(err, errlen, sub, "name used twice:", p[i].name);
				goto bad;
			}
			if (!strcmp(p[i].node, p[j].node) && p[i].tunnel == p[j].tunnel) {
				snprintf(err, errlen, "%s.tunnel: %u is %s's too, on node %s",
					 sub, p[i].tunnel, p[j].name, p[i].node);
				goto bad;
			}
		}
	}
	*out = p;
	*n = len;
	return 0;
bad:
	free(p);
	return -1;
}

static bool path_eq(const struct pol_path *a, const struct pol_path *b)
{
	return a->nsegs == b->nsegs &&
	       !memcmp(a->segs, b->segs, a->nsegs * sizeof(a->segs[0]));
}

bool policy_tunnel_eq(const struct policy *a, const struct policy *b)
{
	if (a->tunnel != b->tunnel || memcmp(&a->src, &b->src, sizeof(a->src)) ||
	    a->npaths != b->npaths || !path_eq(&a->backup, &b->backup))
		return false;
	for (uint32_t i = 0; i < a->npaths; i++)
		if (!path_eq(&a->paths[i], &b->paths[i]) ||
		    a->paths[i].weight != b->paths[i].weight)
			return false;
	return true;
}

static bool hops_eq(const struct rsvp_addr *a, uint32_t na,
		    const struct rsvp_addr *b, uint32_t nb)
{
	if (na != nb)
		return false;
	for (uint32_t i = 0; i < na; i++)
		if (!rsvp_addr_eq(&a[i], &b[i]))
			return false;
	return true;
}

bool pol_credit_eq(const struct pol_credit *a, const struct pol_credit *b)
{
	return rsvp_flow_eq(&a->flow, &b->flow) &&
	       hops_eq(a->path, a->npath, b->path, b->npath) &&
	       hops_eq(a->backup, a->nbackup, b->backup, b->nbackup);
}

bool pol_rule_key_eq(const struct pol_rule *a, const struct pol_rule *b)
{
	size_t alen = a->family == AF_INET ? 4 : 16;

	return a->family == b->family && a->dst_len == b->dst_len &&
	       !memcmp(a->dst, b->dst, alen) && a->src_len == b->src_len &&
	       (!a->src_len || !memcmp(a->src, b->src, alen)) &&
	       a->qpn_lo == b->qpn_lo && a->qpn_hi == b->qpn_hi;
}

/* --- the message ----------------------------------------------------------- */

static int policy_encode(struct json_object *root, const void *body, char *err,
			 size_t errlen)
{
	const struct msg_policy *m = body;
	struct json_object *a = json_object_new_array();

	(void)err;
	(void)errlen;
	json_object_object_add(root, "rev", json_object_new_uint64(m->rev));
	json_object_object_add(root, "full", json_object_new_boolean(m->full));
	if (m->term)
		json_object_object_add(root, "term", json_object_new_uint64(m->term));
	if (m->term && m->epoch)
		json_object_object_add(root, "epoch", json_object_new_uint64(m->epoch));
	for (size_t i = 0; i < m->n; i++)
		json_object_array_add(a, policy_json(&m->p[i]));
	json_object_object_add(root, "policies", a);
	return 0;
}

static int policy_decode(struct json_object *root, void *body, char *err,
			 size_t errlen)
{
	struct msg_policy *m = body;
	struct json_object *v;

	if (msg_get_u64(root, "", "rev", UINT64_MAX, &m->rev, err, errlen))
		return -1;
	if (!json_object_object_get_ex(root, "full", &v) ||
	    !json_object_is_type(v, json_type_boolean)) {
		snprintf(err, errlen, "full: expected true or false");
		return -1;
	}
	m->full = json_object_get_boolean(v);
	/* optional: absent is 0, no term (one controller); present, an etcd revision */
	if (json_object_object_get_ex(root, "term", NULL)) {
		if (msg_get_u64(root, "", "term", UINT64_MAX, &m->term, err, errlen))
			return -1;
		if (!m->term) {
			snprintf(err, errlen, "term: 0 is no term (leave it out)");
			return -1;
		}
	}
	/* optional: the term's etcd cluster; absent is 0, unknown */
	if (json_object_object_get_ex(root, "epoch", NULL)) {
		if (!m->term) {
			snprintf(err, errlen, "epoch: only with a term");
			return -1;
		}
		if (msg_get_u64(root, "", "epoch", UINT64_MAX, &m->epoch, err, errlen))
			return -1;
		if (!m->epoch) {
			snprintf(err, errlen, "epoch: 0 is no epoch (leave it out)");
			return -1;
		}
	}
	if (!json_object_object_get_ex(root, "policies", &v)) {
		snprintf(err, errlen, "policies: required");
		return -1;
	}
	return policy_array_parse(v, "policies", &m->p, &m->n, err, errlen);
}

static void policy_free(void *body)
{
	free(((struct msg_policy *)body)->p);
}

const struct msg_type msg_policy_type = {
	.type = MSG_POLICY,
	.name = "policy-push",
	.max_len = MSG_MAX_LEN,
	.keys = policy_msg_keys,
	.body_size = sizeof(struct msg_policy),
	.decode = policy_decode,
	.encode = policy_encode,
	.free = policy_free,
};
