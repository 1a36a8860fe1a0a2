// SPDX-License-Identifier: GPL-2.0
/*
 * Rules: which inner packets go into which tunnel. A rule matches an
 * inner destination prefix, optionally a source prefix and a range of
 * BTH destination QPs.
 *
 * Precedence. The most specific rule wins: longest destination prefix,
 * then longest source prefix (none counts as /0), then narrowest QP
 * range, then the rule added first. The hook takes the first rule in that
 * order that matches the packet, skipping rules whose tunnel is
 * administratively down.
 *
 * Structure. Each inner family has a binary trie of destination prefixes,
 * path-compressed as in WireGuard's allowedips: a node is either the
 * prefix of one or more rules or a branch point with two children, so a
 * trie of n prefixes has fewer than 2n nodes and is at most 33 (IPv4) or
 * 129 (IPv6) nodes deep. A node keeps the rules of its exact destination
 * prefix on an RCU list in precedence order (longest source prefix,
 * narrowest QP range, oldest first). Keys are the address in host order,
 * most significant bit first, so a node's prefix compares with one
 * xor and fls64().
 *
 * Lookup. Descend along the packet's destination to the deepest node
 * with rules, scan its rules in order; if none takes the packet (source,
 * QP range or tunnel down), descend again to the deepest node with rules
 * shorter than that one, and so on toward the root. Walking back up
 * would need parent pointers the hook can trust while a change moves
 * them, or a stack of up to 129 nodes (1 KB) in the hook's frame;
 * descending again costs a walk per level of fallback, and a packet that
 * has to fall back at all is the uncommon case. The cost per packet is
 * O(address bits x fallback levels + rules on the nodes scanned),
 * independent of the number of rules in the table.
 *
 * Changes. Every change happens under dn->lock and is O(prefix length)
 * plus the rules already on the node it touches: adding n rules is
 * O(n x bits), not O(n^2). Nodes and rules are allocated before anything
 * is linked, so a failed allocation changes nothing; each change is then
 * one pointer published with rcu_assign_pointer() (a rule on a list, a
 * node in its parent's slot), its own pointers set before, so the hook
 * sees the trie before or after the change, never half of it. A removed
 * node keeps its children: a hook standing on it walks on. Rules and
 * nodes are freed after a grace period (call_rcu), never waited for
 * under the lock.
 *
 * Memory. A rule is one object of the dmsc_rule cache (104 bytes on
 * x86-64) and a per-cpu u64 counter; a destination prefix costs one
 * node (72 bytes) and at most one branch node: under 250 bytes plus 8
 * per possible cpu per rule, and nothing larger than one object is ever
 * allocated, so no allocation grows with the table (no kvmalloc needed).
 * A namespace holds at most DMSC_RULES_MAX rules (uapi): past it an add
 * gets -ENOSPC ("rule table full").
 *
 * Dumps walk the trie in prefix order (IPv4 first; by address, a shorter
 * prefix before the longer ones it covers; the rules of one prefix in
 * precedence order) and resume from the last node's key.
 */

#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/ipv6.h>

#include "dmsc.h"

/* A destination prefix, or a branch point (no rules, two children). */
struct dmsc_rule_node {
	struct dmsc_rule_node __rcu *bit[2];
	struct hlist_head rules;	/* RCU, in precedence order */
	struct dmsc_rule_node *parent;	/* under dn->lock, NULL at the root */
	u64 key[2];		/* host order, MSB first, 0 past cidr */
	u8 cidr;		/* prefix length */
	u8 bits;		/* 32 or 128: the family */
	struct rcu_head rcu;
};

static struct kmem_cache *dmsc_rule_cache __read_mostly;
static struct kmem_cache *dmsc_node_cache __read_mostly;

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

/* An address (IPv4 in its first 4 bytes) as a trie key. */
static void dmsc_key(u64 key[2], const struct in6_addr *addr,
		     unsigned int bits)
{
	const __be32 *a = addr->s6_addr32;

	key[0] = (u64)be32_to_cpu(a[0]) << 32;
	key[1] = 0;
	if (bits == 128) {
		key[0] |= be32_to_cpu(a[1]);
		key[1] = (u64)be32_to_cpu(a[2]) << 32 | be32_to_cpu(a[3]);
	}
}

/* Leading bits two keys share, at most @bits. */
static unsigned int dmsc_common_bits(const u64 *a, const u64 *b,
				     unsigned int bits)
{
	u64 x0 = a[0] ^ b[0], x1 = a[1] ^ b[1];
	unsigned int n;

	if (x0)
		n = 64 - fls64(x0);
	else if (x1)
		n = 128 - fls64(x1);
	else
		n = 128;
	return min(n, bits);
}

/* Bit @i of a key, 0 the most significant. */
static unsigned int dmsc_key_bit(const u64 *key, unsigned int i)
{
	return (key[i / 64] >> (63 - i % 64)) & 1;
}

/* Does the node's prefix cover @key? */
static bool dmsc_node_covers(const struct dmsc_rule_node *node,
			     const u64 *key)
{
	return dmsc_common_bits(node->key, key, node->bits) >= node->cidr;
}

/*
 * The deepest node with rules whose prefix covers @key and is shorter
 * than @limit bits, or NULL. Under RCU.
 */
static const struct dmsc_rule_node *
dmsc_rule_find(const struct dmsc_rule_node *node, const u64 *key,
	       unsigned int limit)
{
	const struct dmsc_rule_node *found = NULL;

	while (node && node->cidr < limit && dmsc_node_covers(node, key)) {
		if (!hlist_empty(&node->rules))
			found = node;
		if (node->cidr == node->bits)
			break;
		node = rcu_dereference(node->bit[dmsc_key_bit(key,
							      node->cidr)]);
	}
	return found;
}

/* Called by the hook under RCU, @root not NULL. */
struct dmsc_rule *dmsc_rule_lookup(const struct dmsc_rule_node *root,
				   const void *saddr, const void *daddr,
				   u32 qpn)
{
	const struct dmsc_rule_node *node;
	unsigned int limit = root->bits + 1;
	struct dmsc_rule *r;
	u64 key[2];

	dmsc_key(key, daddr, root->bits);
	while ((node = dmsc_rule_find(root, key, limit))) {
		hlist_for_each_entry_rcu(r, &node->rules, list) {
			if (qpn < r->qpn_lo || qpn > r->qpn_hi)
				continue;
			if (r->src_len &&
			    !dmsc_prefix_match(saddr, &r->src, r->src_len,
					       r->family))
				continue;
			if (!READ_ONCE(r->tun->admin_up))
				continue;
			return r;
		}
		limit = node->cidr;
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
	kmem_cache_free(dmsc_rule_cache, r);
}

static void dmsc_rule_free_rcu(struct rcu_head *head)
{
	dmsc_rule_free(container_of(head, struct dmsc_rule, rcu));
}

static void dmsc_node_free_rcu(struct rcu_head *head)
{
	kmem_cache_free(dmsc_node_cache,
			container_of(head, struct dmsc_rule_node, rcu));
}

/* A node for the first @cidr bits of @key, linked nowhere yet. */
static struct dmsc_rule_node *dmsc_node_alloc(const u64 *key, u8 cidr,
					      u8 bits)
{
	struct dmsc_rule_node *node;

	node = kmem_cache_zalloc(dmsc_node_cache, GFP_KERNEL_ACCOUNT);
	if (!node)
		return NULL;
	node->key[0] = key[0];
	node->key[1] = key[1];
	if (cidr < 128)
		node->key[cidr / 64] &= ~(~0ULL >> (cidr % 64));
	if (cidr < 64)
		node->key[1] = 0;
	node->cidr = cidr;
	node->bits = bits;
	INIT_HLIST_HEAD(&node->rules);
	return node;
}

/* The slot that points at @node: its parent's child, or the root. */
static struct dmsc_rule_node __rcu **dmsc_node_slot(struct dmsc_net *dn,
						    struct dmsc_rule_node *node)
{
	struct dmsc_rule_node *p = node->parent;

	if (!p)
		return &dn->rules[node->bits == 128];
	return &p->bit[dmsc_key_bit(node->key, p->cidr)];
}

/* The node of exactly this prefix, or NULL. Under dn->lock. */
static struct dmsc_rule_node *dmsc_node_exact(struct dmsc_net *dn,
					      unsigned int fi, const u64 *key,
					      u8 cidr)
{
	struct dmsc_rule_node *node = dmsc_dereference(dn, dn->rules[fi]);

	while (node && node->cidr <= cidr && dmsc_node_covers(node, key)) {
		if (node->cidr == cidr)
			return node;
		node = dmsc_dereference(dn,
					node->bit[dmsc_key_bit(key, node->cidr)]);
	}
	return NULL;
}

/* Put @r on @node's list in precedence order (it is the youngest). */
static void dmsc_node_add_rule(struct dmsc_rule_node *node,
			       struct dmsc_rule *r)
{
	struct dmsc_rule *pos, *last = NULL;

	hlist_for_each_entry(pos, &node->rules, list) {
		if (dmsc_rule_before(r, pos)) {
			hlist_add_before_rcu(&r->list, &pos->list);
			return;
		}
		last = pos;
	}
	if (last)
		hlist_add_behind_rcu(&r->list, &last->list);
	else
		hlist_add_head_rcu(&r->list, &node->rules);
}

/*
 * Add @r to the trie of its family: on the node of its destination
 * prefix if there is one; else on a new node, with a new branch node if
 * the new prefix and the subtree where it goes part before either ends.
 * Both are allocated first: on -ENOMEM nothing has changed.
 */
static int dmsc_trie_insert(struct dmsc_net *dn, struct dmsc_rule *r)
{
	unsigned int fi = dmsc_family_idx(r->family);
	struct dmsc_rule_node __rcu **slot = &dn->rules[fi];
	struct dmsc_rule_node *parent = NULL, *down, *node, *branch = NULL;
	u8 bits = fi ? 128 : 32, cidr = r->dst_len, common = cidr;
	u64 key[2];

	dmsc_key(key, &r->dst, bits);
	down = dmsc_dereference(dn, *slot);
	while (down && down->cidr <= cidr && dmsc_node_covers(down, key)) {
		if (down->cidr == cidr) {
			dmsc_node_add_rule(down, r);
			return 0;
		}
		parent = down;
		slot = &down->bit[dmsc_key_bit(key, down->cidr)];
		down = dmsc_dereference(dn, *slot);
	}

	/*
	 * @down, if any, is longer than the new prefix or parts from it
	 * within its own length: the new node goes between @parent and it.
	 */
	node = dmsc_node_alloc(key, cidr, bits);
	if (!node)
		return -ENOMEM;
	if (down) {
		common = dmsc_common_bits(down->key, key, cidr);
		if (common < cidr) {
			branch = dmsc_node_alloc(key, common, bits);
			if (!branch) {
				kmem_cache_free(dmsc_node_cache, node);
				return -ENOMEM;
			}
		}
	}

	hlist_add_head_rcu(&r->list, &node->rules);
	node->parent = parent;
	if (branch) {
		/* Parted at bit @common: the branch takes both. */
		branch->parent = parent;
		node->parent = branch;
		down->parent = branch;
		RCU_INIT_POINTER(branch->bit[dmsc_key_bit(key, common)], node);
		RCU_INIT_POINTER(branch->bit[dmsc_key_bit(down->key, common)],
				 down);
		rcu_assign_pointer(*slot, branch);
	} else if (down) {
		/* The new prefix covers @down. */
		down->parent = node;
		RCU_INIT_POINTER(node->bit[dmsc_key_bit(down->key, cidr)],
				 down);
		rcu_assign_pointer(*slot, node);
	} else {
		rcu_assign_pointer(*slot, node);
	}
	return 0;
}

/* Replace @node, which has at most one child, by that child. */
static void dmsc_node_unlink(struct dmsc_net *dn, struct dmsc_rule_node *node)
{
	struct dmsc_rule_node *child;

	child = dmsc_dereference(dn, node->bit[0]) ?:
		dmsc_dereference(dn, node->bit[1]);
	if (child)
		child->parent = node->parent;
	rcu_assign_pointer(*dmsc_node_slot(dn, node), child);
	/* Its children stay: a hook standing on it walks on. */
	call_rcu(&node->rcu, dmsc_node_free_rcu);
}

static bool dmsc_node_forks(struct dmsc_net *dn,
			    const struct dmsc_rule_node *node)
{
	return dmsc_dereference(dn, node->bit[0]) &&
	       dmsc_dereference(dn, node->bit[1]);
}

/*
 * Take @r off @node. A node left without rules stays only as a branch
 * point (two children); a parent branch point left with one child goes
 * too. Never fails.
 */
static void dmsc_trie_remove(struct dmsc_net *dn, struct dmsc_rule_node *node,
			     struct dmsc_rule *r)
{
	struct dmsc_rule_node *parent;

	hlist_del_rcu(&r->list);
	if (!hlist_empty(&node->rules) || dmsc_node_forks(dn, node))
		return;
	parent = node->parent;
	dmsc_node_unlink(dn, node);
	if (parent && hlist_empty(&parent->rules) &&
	    !dmsc_node_forks(dn, parent))
		dmsc_node_unlink(dn, parent);
}

/* The rule of @node with the match key of @key, or NULL. */
static struct dmsc_rule *dmsc_node_rule(struct dmsc_rule_node *node,
					const struct dmsc_rule *key)
{
	struct dmsc_rule *r;

	if (!node)
		return NULL;
	hlist_for_each_entry(r, &node->rules, list)
		if (dmsc_rule_same_key(r, key))
			return r;
	return NULL;
}

static struct dmsc_rule_node *dmsc_rule_node_of(struct dmsc_net *dn,
						const struct dmsc_rule *key)
{
	unsigned int fi = dmsc_family_idx(key->family);
	u64 k[2];

	dmsc_key(k, &key->dst, fi ? 128 : 32);
	return dmsc_node_exact(dn, fi, k, key->dst_len);
}

static int dmsc_rule_new(struct dmsc_net *dn, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr *tb[DMSC_RULE_A_MAX + 1];
	struct dmsc_rule key = {}, *r;
	struct dmsc_tunnel *tun;
	u32 tunnel;
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

	r = dmsc_node_rule(dmsc_rule_node_of(dn, &key), &key);
	if (r) {
		NL_SET_ERR_MSG_FMT(extack,
				   "a rule with this match exists (tunnel %u)",
				   r->tun->id);
		return -EEXIST;
	}
	if (dn->n_rules >= DMSC_RULES_MAX) {
		NL_SET_ERR_MSG_FMT(extack, "rule table full: %u rules",
				   dn->n_rules);
		return -ENOSPC;
	}

	/* The first rule of the namespace brings the hooks. */
	err = dmsc_steer_hook(dn, extack);
	if (err)
		return err;

	r = kmem_cache_alloc(dmsc_rule_cache, GFP_KERNEL_ACCOUNT);
	if (!r)
		goto nomem;
	*r = key;
	r->packets = alloc_percpu_gfp(u64, GFP_KERNEL_ACCOUNT);
	if (!r->packets) {
		kmem_cache_free(dmsc_rule_cache, r);
		goto nomem;
	}
	r->seq = dn->rule_seq + 1;
	r->tun = tun;
	if (dmsc_trie_insert(dn, r)) {
		dmsc_rule_free(r);
		goto nomem;
	}

	dn->rule_seq++;
	tun->n_rules++;
	WRITE_ONCE(dn->n_rules, dn->n_rules + 1);
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
	struct dmsc_rule_node *node;
	struct dmsc_rule key = {}, *r;
	u32 tunnel;
	int err;

	err = dmsc_rule_parse(info, &key, tb, &tunnel);
	if (err)
		return err;
	node = dmsc_rule_node_of(dn, &key);
	r = dmsc_node_rule(node, &key);
	/* A tunnel, if given, must be the rule's: it is part of "which". */
	if (!r || (tunnel && r->tun->id != tunnel)) {
		NL_SET_ERR_MSG(extack, "no such rule");
		return -ENOENT;
	}

	dmsc_trie_remove(dn, node, r);
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
 * Where a dump goes on: the node (family, key, prefix length) it was on
 * and how many of its rules went out.
 */
struct dmsc_rule_cursor {
	u64 key[2];
	u32 pos;
	u8 fi;
	u8 cidr;
};

/* Prefix order: by key, then the shorter prefix first. */
static int dmsc_node_cmp(const struct dmsc_rule_node *node,
			 const struct dmsc_rule_cursor *c)
{
	if (node->key[0] != c->key[0])
		return node->key[0] < c->key[0] ? -1 : 1;
	if (node->key[1] != c->key[1])
		return node->key[1] < c->key[1] ? -1 : 1;
	return (int)node->cidr - (int)c->cidr;
}

/*
 * The first node at or after the cursor in prefix order, which is the
 * trie's pre-order (a node, its 0 subtree, its 1 subtree). A node before
 * the cursor whose prefix does not cover the cursor's key has its whole
 * subtree before the cursor; one that covers it leads toward it, and its
 * 1 subtree is the answer if the cursor's side, the 0 side, has none.
 */
static struct dmsc_rule_node *dmsc_node_seek(struct dmsc_net *dn,
					     const struct dmsc_rule_cursor *c)
{
	struct dmsc_rule_node *node, *next = NULL;
	unsigned int b;

	node = dmsc_dereference(dn, dn->rules[c->fi]);
	while (node) {
		if (dmsc_node_cmp(node, c) >= 0)
			return node;
		if (!dmsc_node_covers(node, c->key) || node->cidr == node->bits)
			return next;
		b = dmsc_key_bit(c->key, node->cidr);
		if (!b)
			next = dmsc_dereference(dn, node->bit[1]) ?: next;
		node = dmsc_dereference(dn, node->bit[b]);
	}
	return next;
}

/* The next node in pre-order. Under dn->lock. */
static struct dmsc_rule_node *dmsc_node_next(struct dmsc_net *dn,
					     struct dmsc_rule_node *node)
{
	struct dmsc_rule_node *p, *c;

	c = dmsc_dereference(dn, node->bit[0]) ?:
	    dmsc_dereference(dn, node->bit[1]);
	if (c)
		return c;
	for (p = node->parent; p; node = p, p = p->parent) {
		c = dmsc_dereference(dn, p->bit[1]);
		if (c && c != node)
			return c;
	}
	return NULL;
}

/*
 * A change between two messages flags the later ones NLM_F_DUMP_INTR;
 * the dump still goes on from the cursor's place in prefix order.
 */
int dmsc_rule_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct dmsc_rule_cursor *c = (struct dmsc_rule_cursor *)cb->ctx;
	struct dmsc_net *dn = dmsc_pernet(sock_net(skb->sk));
	struct dmsc_rule_node *node;
	struct dmsc_rule *r;
	u32 i;

	BUILD_BUG_ON(sizeof(*c) > sizeof(cb->ctx));
	mutex_lock(&dn->lock);
	cb->seq = dn->gen;
	for (; c->fi < ARRAY_SIZE(dn->rules); c->fi++) {
		node = dmsc_node_seek(dn, c);
		for (; node; node = dmsc_node_next(dn, node)) {
			if (dmsc_node_cmp(node, c)) {
				c->key[0] = node->key[0];
				c->key[1] = node->key[1];
				c->cidr = node->cidr;
				c->pos = 0;
			}
			i = 0;
			hlist_for_each_entry(r, &node->rules, list) {
				if (i++ < c->pos)
					continue;
				if (dmsc_rule_fill(skb, r, cb))
					goto out;
				c->pos++;
			}
		}
		memset(c, 0, offsetof(struct dmsc_rule_cursor, fi));
		c->cidr = 0;
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

/*
 * The hook is gone and no request can come: free without grace, children
 * before their parent, with no stack.
 */
void dmsc_rule_net_exit(struct dmsc_net *dn)
{
	struct dmsc_rule_node *node, *child;
	struct hlist_node *tmp;
	struct dmsc_rule *r;
	unsigned int fi, b;

	for (fi = 0; fi < ARRAY_SIZE(dn->rules); fi++) {
		node = rcu_replace_pointer(dn->rules[fi], NULL, true);
		while (node) {
			for (b = 0; b < 2; b++) {
				child = rcu_dereference_protected(node->bit[b],
								  true);
				if (child)
					break;
			}
			if (child) {
				RCU_INIT_POINTER(node->bit[b], NULL);
				node = child;
				continue;
			}
			hlist_for_each_entry_safe(r, tmp, &node->rules, list) {
				r->tun->n_rules--;
				dmsc_rule_free(r);
			}
			child = node->parent;
			kmem_cache_free(dmsc_node_cache, node);
			node = child;
			cond_resched();
		}
	}
	dn->n_rules = 0;
}

int __init dmsc_rule_cache_init(void)
{
	dmsc_rule_cache = KMEM_CACHE(dmsc_rule, SLAB_ACCOUNT);
	dmsc_node_cache = KMEM_CACHE(dmsc_rule_node, SLAB_ACCOUNT);
	if (dmsc_rule_cache && dmsc_node_cache)
		return 0;
	dmsc_rule_cache_exit();
	return -ENOMEM;
}

/* After rcu_barrier(): callbacks free into these caches. */
void dmsc_rule_cache_exit(void)
{
	kmem_cache_destroy(dmsc_node_cache);
	kmem_cache_destroy(dmsc_rule_cache);
}
