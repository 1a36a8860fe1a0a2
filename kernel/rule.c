// SPDX-License-Identifier: GPL-2.0
/*
 * Rules: which inner packets go into which tunnel. A rule matches an
 * inner destination prefix, optionally a source prefix and a range of
 * BTH destination QPs.
 *
 * Each inner family has one array of rules sorted most specific first:
 * longest destination prefix, then longest source prefix (none counts as
 * /0), then narrowest QP range, then the rule added first. The hook takes
 * the first rule that matches, skipping rules whose tunnel is
 * administratively down. The scan is linear: rule sets are a handful of
 * prefixes per node, and a sorted array beats a trie at that size. A
 * change builds a new array and publishes it under RCU, so the hook never
 * sees half a change and a failed allocation changes nothing.
 */

#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/ipv6.h>

#include "dmsc.h"

static unsigned int dmsc_family_idx(u8 family)
{
	return family == AF_INET6;
}

static unsigned int dmsc_addr_len(u8 family)
{
	return family == AF_INET6 ? sizeof(struct in6_addr) : sizeof(__be32);
}

static bool dmsc_prefix_match(const struct in6_addr *addr,
			      const struct in6_addr *pfx, u8 len, u8 family)
{
	__be32 mask;

	if (family == AF_INET6)
		return ipv6_prefix_equal(addr, pfx, len);
	mask = len ? htonl(~0U << (32 - len)) : 0;
	return !((addr->s6_addr32[0] ^ pfx->s6_addr32[0]) & mask);
}

/* Called by the hook under RCU. */
struct dmsc_rule *dmsc_rule_lookup(const struct dmsc_rule_table *t,
				   const void *saddr, const void *daddr,
				   u32 qpn)
{
	u32 i;

	for (i = 0; i < t->n; i++) {
		struct dmsc_rule *r = t->rules[i];

		if (qpn < r->qpn_lo || qpn > r->qpn_hi)
			continue;
		if (!dmsc_prefix_match(daddr, &r->dst, r->dst_len, r->family))
			continue;
		if (r->src_len &&
		    !dmsc_prefix_match(saddr, &r->src, r->src_len, r->family))
			continue;
		if (!READ_ONCE(r->tun->admin_up))
			continue;
		return r;
	}
	return NULL;
}

/* Does @a sort before @b? */
static bool dmsc_rule_before(const struct dmsc_rule *a,
			     const struct dmsc_rule *b)
{
	if (a->dst_len != b->dst_len)
		return a->dst_len > b->dst_len;
	if (a->src_len != b->src_len)
		return a->src_len > b->src_len;
	if (a->qpn_hi - a->qpn_lo != b->qpn_hi - b->qpn_lo)
		return a->qpn_hi - a->qpn_lo < b->qpn_hi - b->qpn_lo;
	return a->seq < b->seq;
}

static bool dmsc_rule_same_key(const struct dmsc_rule *a,
			       const struct dmsc_rule *b)
{
	return a->family == b->family && a->dst_len == b->dst_len &&
	       a->src_len == b->src_len && a->qpn_lo == b->qpn_lo &&
	       a->qpn_hi == b->qpn_hi && ipv6_addr_equal(&a->dst, &b->dst) &&
	       ipv6_addr_equal(&a->src, &b->src);
}

/* No bit set past the prefix length, as iproute2 insists. */
static bool dmsc_prefix_clean(const struct in6_addr *a, u32 len, u32 alen)
{
	u32 i;

	for (i = len / 8; i < alen; i++) {
		u8 mask = i == len / 8 ? 0xff >> (len % 8) : 0xff;

		if (a->s6_addr[i] & mask)
			return false;
	}
	return true;
}

static int dmsc_rule_prefix(struct nlattr *addr, struct nlattr *plen,
			    u8 family, struct in6_addr *out, u8 *len,
			    struct netlink_ext_ack *extack)
{
	u32 alen = dmsc_addr_len(family);

	if (nla_len(addr) != alen) {
		NL_SET_ERR_MSG_FMT(extack,
				   "address of %u bytes for a family of %u",
				   nla_len(addr), alen);
		NL_SET_BAD_ATTR(extack, addr);
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	memcpy(out, nla_data(addr), alen);
	*len = plen ? nla_get_u8(plen) : alen * 8;
	if (*len > alen * 8) {
		NL_SET_ERR_MSG_FMT(extack, "prefix length %u > %u", *len,
				   alen * 8);
		NL_SET_BAD_ATTR(extack, plen);
		return -EINVAL;
	}
	if (!dmsc_prefix_clean(out, *len, alen)) {
		NL_SET_ERR_MSG_FMT(extack,
				   "invalid prefix: host bits set beyond /%u",
				   *len);
		NL_SET_BAD_ATTR(extack, addr);
		return -EINVAL;
	}
	return 0;
}

/*
 * The RULE nest into @r (match key only) and, if present, the tunnel id
 * into @tunnel (0 if absent).
 */
static int dmsc_rule_parse(struct genl_info *info, struct dmsc_rule *r,
			   struct nlattr **tb, u32 *tunnel)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr *nest;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, DMSC_A_RULE))
		return -EINVAL;
	nest = info->attrs[DMSC_A_RULE];
	err = nla_parse_nested(tb, DMSC_RULE_A_MAX, nest, dmsc_rule_policy,
			       extack);
	if (err)
		return err;

	if (!tb[DMSC_RULE_A_FAMILY]) {
		NL_SET_ERR_ATTR_MISS(extack, nest, DMSC_RULE_A_FAMILY);
		NL_SET_ERR_MSG(extack, "rule family missing");
		return -EINVAL;
	}
	r->family = nla_get_u8(tb[DMSC_RULE_A_FAMILY]);
	if (r->family != AF_INET && r->family != AF_INET6) {
		NL_SET_ERR_MSG_ATTR(extack, tb[DMSC_RULE_A_FAMILY],
				    "family must be AF_INET or AF_INET6");
		return -EINVAL;
	}

	if (!tb[DMSC_RULE_A_DST]) {
		NL_SET_ERR_ATTR_MISS(extack, nest, DMSC_RULE_A_DST);
		NL_SET_ERR_MSG(extack, "rule destination missing");
		return -EINVAL;
	}
	err = dmsc_rule_prefix(tb[DMSC_RULE_A_DST], tb[DMSC_RULE_A_DST_LEN],
			       r->family, &r->dst, &r->dst_len, extack);
	if (err)
		return err;

	memset(&r->src, 0, sizeof(r->src));
	r->src_len = 0;
	if (tb[DMSC_RULE_A_SRC]) {
		err = dmsc_rule_prefix(tb[DMSC_RULE_A_SRC],
				       tb[DMSC_RULE_A_SRC_LEN], r->family,
				       &r->src, &r->src_len, extack);
		if (err)
			return err;
	} else if (tb[DMSC_RULE_A_SRC_LEN] &&
		   nla_get_u8(tb[DMSC_RULE_A_SRC_LEN])) {
		NL_SET_ERR_MSG_ATTR(extack, tb[DMSC_RULE_A_SRC_LEN],
				    "source prefix length without a source");
		return -EINVAL;
	}

	r->qpn_lo = tb[DMSC_RULE_A_QPN_LO] ?
		    nla_get_u32(tb[DMSC_RULE_A_QPN_LO]) : 0;
	r->qpn_hi = tb[DMSC_RULE_A_QPN_HI] ?
		    nla_get_u32(tb[DMSC_RULE_A_QPN_HI]) : DMSC_QPN_MAX;
	if (r->qpn_lo > r->qpn_hi) {
		NL_SET_ERR_MSG_FMT(extack, "empty qpn range: %u > %u",
				   r->qpn_lo, r->qpn_hi);
		NL_SET_BAD_ATTR(extack, tb[DMSC_RULE_A_QPN_LO]);
		return -EINVAL;
	}

	*tunnel = tb[DMSC_RULE_A_TUNNEL] ?
		  nla_get_u32(tb[DMSC_RULE_A_TUNNEL]) : 0;
	return 0;
}

static void dmsc_rule_free(struct dmsc_rule *r)
{
	free_percpu(r->packets);
	kfree(r);
}

static void dmsc_rule_free_rcu(struct rcu_head *head)
{
	dmsc_rule_free(container_of(head, struct dmsc_rule, rcu));
}

static struct dmsc_rule_table *dmsc_rule_table_alloc(u32 n)
{
	struct dmsc_rule_table *t;

	t = kzalloc(struct_size(t, rules, n), GFP_KERNEL_ACCOUNT);
	if (t)
		t->n = n;
	return t;
}

static int dmsc_rule_new(struct dmsc_net *dn, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr *tb[DMSC_RULE_A_MAX + 1];
	struct dmsc_rule_table *old, *t;
	struct dmsc_rule key = {}, *r;
	struct dmsc_tunnel *tun;
	u32 tunnel, i, j, n;
	unsigned int fi;
	int err;

	err = dmsc_rule_parse(info, &key, tb, &tunnel);
	if (err)
		return err;
	if (!tb[DMSC_RULE_A_TUNNEL]) {
		NL_SET_ERR_ATTR_MISS(extack, info->attrs[DMSC_A_RULE],
				     DMSC_RULE_A_TUNNEL);
		NL_SET_ERR_MSG(extack, "rule tunnel missing");
		return -EINVAL;
	}
	tun = dmsc_tunnel_lookup(dn, tunnel);
	if (!tun) {
		NL_SET_ERR_MSG_FMT(extack, "tunnel %u does not exist", tunnel);
		NL_SET_BAD_ATTR(extack, tb[DMSC_RULE_A_TUNNEL]);
		return -ENOENT;
	}

	fi = dmsc_family_idx(key.family);
	old = dmsc_dereference(dn, dn->rules[fi]);
	n = old ? old->n : 0;
	for (i = 0; i < n; i++) {
		if (dmsc_rule_same_key(old->rules[i], &key)) {
			NL_SET_ERR_MSG_FMT(extack,
					   "a rule with this match exists (tunnel %u)",
					   old->rules[i]->tun->id);
			return -EEXIST;
		}
	}

	/* The first rule of the namespace brings the hooks. */
	err = dmsc_steer_hook(dn, extack);
	if (err)
		return err;

	r = kmemdup(&key, sizeof(key), GFP_KERNEL_ACCOUNT);
	if (!r)
		goto nomem;
	r->packets = alloc_percpu_gfp(u64, GFP_KERNEL_ACCOUNT);
	t = dmsc_rule_table_alloc(n + 1);
	if (!r->packets || !t) {
		kfree(t);
		dmsc_rule_free(r);
		goto nomem;
	}
	r->seq = ++dn->rule_seq;
	r->tun = tun;

	/* Insert in order; the new rule is the youngest of its rank. */
	for (i = 0, j = 0; i < n; i++) {
		if (j == i && dmsc_rule_before(r, old->rules[i]))
			t->rules[j++] = r;
		t->rules[j++] = old->rules[i];
	}
	if (j == n)
		t->rules[j] = r;

	tun->n_rules++;
	WRITE_ONCE(dn->n_rules, dn->n_rules + 1);
	rcu_assign_pointer(dn->rules[fi], t);
	if (old)
		kfree_rcu(old, rcu);
	dmsc_changed(dn);
	return 0;

nomem:
	NL_SET_ERR_MSG(extack, "out of memory for the rule");
	return -ENOMEM;
}

int dmsc_rule_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct dmsc_net *dn = dmsc_pernet(genl_info_net(info));
	int err;

	mutex_lock(&dn->lock);
	err = dmsc_rule_new(dn, info);
	mutex_unlock(&dn->lock);
	return err;
}

static int dmsc_rule_del(struct dmsc_net *dn, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr *tb[DMSC_RULE_A_MAX + 1];
	struct dmsc_rule_table *old, *t = NULL;
	struct dmsc_rule key = {}, *r = NULL;
	u32 tunnel, i, j;
	unsigned int fi;
	int err;

	err = dmsc_rule_parse(info, &key, tb, &tunnel);
	if (err)
		return err;
	fi = dmsc_family_idx(key.family);
	old = dmsc_dereference(dn, dn->rules[fi]);
	for (i = 0; old && i < old->n; i++) {
		if (dmsc_rule_same_key(old->rules[i], &key)) {
			r = old->rules[i];
			break;
		}
	}
	/* A tunnel, if given, must be the rule's: it is part of "which". */
	if (!r || (tunnel && r->tun->id != tunnel)) {
		NL_SET_ERR_MSG(extack, "no such rule");
		return -ENOENT;
	}

	if (old->n > 1) {
		t = dmsc_rule_table_alloc(old->n - 1);
		if (!t) {
			NL_SET_ERR_MSG(extack, "out of memory for the rule table");
			return -ENOMEM;
		}
		for (i = 0, j = 0; i < old->n; i++)
			if (old->rules[i] != r)
				t->rules[j++] = old->rules[i];
	}
	rcu_assign_pointer(dn->rules[fi], t);
	kfree_rcu(old, rcu);
	r->tun->n_rules--;
	WRITE_ONCE(dn->n_rules, dn->n_rules - 1);
	call_rcu(&r->rcu, dmsc_rule_free_rcu);
	dmsc_changed(dn);
	return 0;
}

int dmsc_rule_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct dmsc_net *dn = dmsc_pernet(genl_info_net(info));
	int err;

	mutex_lock(&dn->lock);
	err = dmsc_rule_del(dn, info);
	mutex_unlock(&dn->lock);
	return err;
}

static u64 dmsc_rule_packets(const struct dmsc_rule *r)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(*per_cpu_ptr(r->packets, cpu));
	return sum;
}

static int dmsc_rule_fill(struct sk_buff *skb, const struct dmsc_rule *r,
			  struct netlink_callback *cb)
{
	u32 alen = dmsc_addr_len(r->family);
	struct nlattr *nest;
	void *hdr;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &dmsc_genl_family, NLM_F_MULTI, DMSC_CMD_RULE_GET);
	if (!hdr)
		return -EMSGSIZE;
	genl_dump_check_consistent(cb, hdr);
	nest = nla_nest_start(skb, DMSC_A_RULE);
	if (!nest)
		goto cancel;
	if (nla_put_u8(skb, DMSC_RULE_A_FAMILY, r->family) ||
	    nla_put(skb, DMSC_RULE_A_DST, alen, &r->dst) ||
	    nla_put_u8(skb, DMSC_RULE_A_DST_LEN, r->dst_len) ||
	    (r->src_len &&
	     (nla_put(skb, DMSC_RULE_A_SRC, alen, &r->src) ||
	      nla_put_u8(skb, DMSC_RULE_A_SRC_LEN, r->src_len))) ||
	    nla_put_u32(skb, DMSC_RULE_A_QPN_LO, r->qpn_lo) ||
	    nla_put_u32(skb, DMSC_RULE_A_QPN_HI, r->qpn_hi) ||
	    nla_put_u32(skb, DMSC_RULE_A_TUNNEL, r->tun->id) ||
	    nla_put_u64_64bit(skb, DMSC_RULE_A_PACKETS, dmsc_rule_packets(r),
			      DMSC_RULE_A_PAD))
		goto cancel;
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/*
 * cb->args[0]: family index, cb->args[1]: position in its table. A
 * change between two messages (positions move) flags the later ones
 * NLM_F_DUMP_INTR.
 */
int dmsc_rule_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct dmsc_net *dn = dmsc_pernet(sock_net(skb->sk));
	const struct dmsc_rule_table *t;

	mutex_lock(&dn->lock);
	cb->seq = dn->gen;
	for (; cb->args[0] < ARRAY_SIZE(dn->rules); cb->args[0]++) {
		t = dmsc_dereference(dn, dn->rules[cb->args[0]]);
		for (; t && cb->args[1] < t->n; cb->args[1]++)
			if (dmsc_rule_fill(skb, t->rules[cb->args[1]], cb))
				goto out;
		cb->args[1] = 0;
	}
out:
	mutex_unlock(&dn->lock);
	return skb->len;
}

int dmsc_rule_net_init(struct dmsc_net *dn)
{
	RCU_INIT_POINTER(dn->rules[0], NULL);
	RCU_INIT_POINTER(dn->rules[1], NULL);
	return 0;
}

/* The hook is gone and no request can come: free without grace. */
void dmsc_rule_net_exit(struct dmsc_net *dn)
{
	struct dmsc_rule_table *t;
	unsigned int fi;
	u32 i;

	for (fi = 0; fi < ARRAY_SIZE(dn->rules); fi++) {
		t = rcu_replace_pointer(dn->rules[fi], NULL, true);
		if (!t)
			continue;
		for (i = 0; i < t->n; i++) {
			t->rules[i]->tun->n_rules--;
			dmsc_rule_free(t->rules[i]);
		}
		kfree(t);
	}
	dn->n_rules = 0;
}
