// SPDX-License-Identifier: GPL-2.0
/* nl_policy.h: the attributes of cli/cmd_tunnel.c and cmd_rule.c, from structs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "nl_policy.h"

static int put_path(struct nl_msg *msg, int type, const struct pol_path *p,
		    bool weight)
{
	struct nlattr *n = nla_nest_start(msg, type);

	if (!n || nla_put(msg, DMSC_PATH_A_SEGS, (int)(p->nsegs * sizeof(p->segs[0])),
			  p->segs) ||
	    (weight && nla_put_u32(msg, DMSC_PATH_A_WEIGHT, p->weight)))
		return -EMSGSIZE;
	nla_nest_end(msg, n);
	return 0;
}

int dmsc_nl_tunnel_put(struct dmsc_nl *nl, int cmd, const struct policy *p)
{
	struct nl_msg *msg = dmsc_nl_msg(cmd, 0);
	struct nlattr *t;

	if (!msg)
		return -ENOMEM;
	t = nla_nest_start(msg, DMSC_A_TUNNEL);
	if (!t || nla_put_u32(msg, DMSC_TUNNEL_A_ID, p->tunnel) ||
	    nla_put(msg, DMSC_TUNNEL_A_SRC, sizeof(p->src), &p->src))
		goto full;
	for (uint32_t i = 0; i < p->npaths; i++)
		if (put_path(msg, DMSC_TUNNEL_A_PATH, &p->paths[i], true))
			goto full;
	if (p->backup.nsegs) {
		if (put_path(msg, DMSC_TUNNEL_A_BACKUP, &p->backup, false))
			goto full;
	} else if (cmd == DMSC_CMD_TUNNEL_SET) {
		/* an empty backup nest removes the one the tunnel had */
		struct nlattr *b = nla_nest_start(msg, DMSC_TUNNEL_A_BACKUP);

		if (!b)
			goto full;
		nla_nest_end_keep_empty(msg, b);
	}
	nla_nest_end(msg, t);
	return dmsc_nl_talk(nl, msg, NULL, NULL);
full:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

int dmsc_nl_tunnel_del(struct dmsc_nl *nl, uint32_t id)
{
	struct nl_msg *msg = dmsc_nl_msg(DMSC_CMD_TUNNEL_DEL, 0);
	struct nlattr *t;

	if (!msg)
		return -ENOMEM;
	t = nla_nest_start(msg, DMSC_A_TUNNEL);
	nla_put_u32(msg, DMSC_TUNNEL_A_ID, id);
	nla_nest_end(msg, t);
	return dmsc_nl_talk(nl, msg, NULL, NULL);
}

struct vec {
	void *v;
	size_t n, cap, size;
	int err;
};

static void *vec_add(struct vec *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 16;
		void *p = realloc(v->v, cap * v->size);

		if (!p) {
			v->err = -ENOMEM;
			return NULL;
		}
		v->v = p;
		v->cap = cap;
	}
	memset((char *)v->v + v->n * v->size, 0, v->size);
	return (char *)v->v + v->n++ * v->size;
}

static void get_path(struct nlattr *nest, struct pol_path *p)
{
	struct nlattr *tb[DMSC_PATH_A_MAX + 1];
	size_t n;

	if (nla_parse_nested(tb, DMSC_PATH_A_MAX, nest, NULL) < 0)
		return;
	p->weight = tb[DMSC_PATH_A_WEIGHT] ? nla_get_u32(tb[DMSC_PATH_A_WEIGHT]) : 1;
	if (!tb[DMSC_PATH_A_SEGS])
		return;
	n = (size_t)nla_len(tb[DMSC_PATH_A_SEGS]) / sizeof(p->segs[0]);
	if (n > DMSC_MAX_SEGS)
		n = DMSC_MAX_SEGS;
	memcpy(p->segs, nla_data(tb[DMSC_PATH_A_SEGS]), n * sizeof(p->segs[0]));
	p->nsegs = (uint32_t)n;
}

static int tunnel_one(struct nlattr **top, void *arg)
{
	struct nlattr *tb[DMSC_TUNNEL_A_MAX + 1], *a;
	struct vec *v = arg;
	struct policy *p;
	int rem;

	if (!top[DMSC_A_TUNNEL] ||
	    nla_parse_nested(tb, DMSC_TUNNEL_A_MAX, top[DMSC_A_TUNNEL], NULL) < 0 ||
	    !tb[DMSC_TUNNEL_A_ID])
		return 0;
	p = vec_add(v);
	if (!p)
		return -1;
	p->tunnel = nla_get_u32(tb[DMSC_TUNNEL_A_ID]);
	if (tb[DMSC_TUNNEL_A_SRC] && nla_len(tb[DMSC_TUNNEL_A_SRC]) == sizeof(p->src))
		memcpy(&p->src, nla_data(tb[DMSC_TUNNEL_A_SRC]), sizeof(p->src));
	/* the paths repeat inside the tunnel nest, in their order */
	nla_for_each_nested(a, top[DMSC_A_TUNNEL], rem)
		if (nla_type(a) == DMSC_TUNNEL_A_PATH && p->npaths < DMSC_MAX_PATHS)
			get_path(a, &p->paths[p->npaths++]);
	if (tb[DMSC_TUNNEL_A_BACKUP])
		get_path(tb[DMSC_TUNNEL_A_BACKUP], &p->backup);
	p->backup.weight = 0;
	return 0;
}

/* A dump of @cmd, each answer made an element of @size bytes by @one. */
static int dump(struct dmsc_nl *nl, int cmd, size_t size,
		int (*one)(struct nlattr **top, void *arg), void **out,
		size_t *n)
{
	struct vec v = { .size = size };
	struct nl_msg *msg = dmsc_nl_msg(cmd, NLM_F_DUMP);
	int err;

	if (!msg)
		return -ENOMEM;
	err = dmsc_nl_talk(nl, msg, one, &v);
	if (!err)
		err = v.err;
	if (err) {
		free(v.v);
		return err;
	}
	*out = v.v;
	*n = v.n;
	return 0;
}

int dmsc_nl_tunnel_dump(struct dmsc_nl *nl, struct policy **out, size_t *n)
{
	return dump(nl, DMSC_CMD_TUNNEL_GET, sizeof(**out), tunnel_one,
		    (void **)out, n);
}

static void tpath_of(struct nlattr *nest, struct qos_tpath *p)
{
	struct nlattr *tb[DMSC_PATH_A_MAX + 1];

	if (nla_parse_nested(tb, DMSC_PATH_A_MAX, nest, NULL) < 0)
		return;
	p->packets = tb[DMSC_PATH_A_PACKETS] ? nla_get_u64(tb[DMSC_PATH_A_PACKETS]) : 0;
	p->bytes = tb[DMSC_PATH_A_BYTES] ? nla_get_u64(tb[DMSC_PATH_A_BYTES]) : 0;
	p->flows = tb[DMSC_PATH_A_FLOWS] ? nla_get_u32(tb[DMSC_PATH_A_FLOWS]) : 0;
}

int dmsc_nl_tunnel_counters_parse(struct nlattr **top, struct qos_tunnel *t)
{
	struct nlattr *tb[DMSC_TUNNEL_A_MAX + 1], *a;
	int rem;

	memset(t, 0, sizeof(*t));
	if (!top[DMSC_A_TUNNEL] ||
	    nla_parse_nested(tb, DMSC_TUNNEL_A_MAX, top[DMSC_A_TUNNEL], NULL) < 0 ||
	    !tb[DMSC_TUNNEL_A_ID])
		return 0;
	t->id = nla_get_u32(tb[DMSC_TUNNEL_A_ID]);
	t->on_backup = tb[DMSC_TUNNEL_A_ACTIVE] &&
		       nla_get_u8(tb[DMSC_TUNNEL_A_ACTIVE]) == DMSC_ACTIVE_BACKUP;
	t->up = !tb[DMSC_TUNNEL_A_ADMIN_UP] || nla_get_u8(tb[DMSC_TUNNEL_A_ADMIN_UP]);
	if (tb[DMSC_TUNNEL_A_PACKETS])
		t->packets = nla_get_u64(tb[DMSC_TUNNEL_A_PACKETS]);
	if (tb[DMSC_TUNNEL_A_BYTES])
		t->bytes = nla_get_u64(tb[DMSC_TUNNEL_A_BYTES]);
	if (tb[DMSC_TUNNEL_A_FLOWS])
		t->flows = nla_get_u32(tb[DMSC_TUNNEL_A_FLOWS]);
	if (tb[DMSC_TUNNEL_A_SWITCHES])
		t->switches = nla_get_u64(tb[DMSC_TUNNEL_A_SWITCHES]);
	/* the paths repeat inside the tunnel nest, in their order */
	nla_for_each_nested(a, top[DMSC_A_TUNNEL], rem)
		if (nla_type(a) == DMSC_TUNNEL_A_PATH && t->npaths < DMSC_MAX_PATHS)
			tpath_of(a, &t->paths[t->npaths++]);
	if (tb[DMSC_TUNNEL_A_BACKUP]) {
		t->has_backup = true;
		tpath_of(tb[DMSC_TUNNEL_A_BACKUP], &t->backup);
	}
	return t->npaths > 0;	/* else not a tunnel the module would make */
}

static int tunnel_counters_one(struct nlattr **top, void *arg)
{
	struct qos_tunnel t, *p;

	if (!dmsc_nl_tunnel_counters_parse(top, &t))
		return 0;
	p = vec_add(arg);
	if (!p)
		return -1;
	*p = t;
	return 0;
}

int dmsc_nl_tunnel_counters(struct dmsc_nl *nl, struct qos_tunnel **out,
			    size_t *n)
{
	return dump(nl, DMSC_CMD_TUNNEL_GET, sizeof(**out), tunnel_counters_one,
		    (void **)out, n);
}

static int rule_msg(struct dmsc_nl *nl, int cmd, const struct pol_rule *r)
{
	struct nl_msg *msg = dmsc_nl_msg(cmd, 0);
	int alen = r->family == AF_INET ? 4 : 16;
	struct nlattr *n;

	if (!msg)
		return -ENOMEM;
	n = nla_nest_start(msg, DMSC_A_RULE);
	if (!n || nla_put_u8(msg, DMSC_RULE_A_FAMILY, r->family) ||
	    nla_put(msg, DMSC_RULE_A_DST, alen, r->dst) ||
	    nla_put_u8(msg, DMSC_RULE_A_DST_LEN, r->dst_len) ||
	    (r->src_len && (nla_put(msg, DMSC_RULE_A_SRC, alen, r->src) ||
			    nla_put_u8(msg, DMSC_RULE_A_SRC_LEN, r->src_len))) ||
	    nla_put_u32(msg, DMSC_RULE_A_QPN_LO, r->qpn_lo) ||
	    nla_put_u32(msg, DMSC_RULE_A_QPN_HI, r->qpn_hi) ||
	    (cmd == DMSC_CMD_RULE_NEW &&
	     nla_put_u32(msg, DMSC_RULE_A_TUNNEL, r->tunnel))) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, n);
	return dmsc_nl_talk(nl, msg, NULL, NULL);
}

int dmsc_nl_rule_add(struct dmsc_nl *nl, const struct pol_rule *r)
{
	return rule_msg(nl, DMSC_CMD_RULE_NEW, r);
}

int dmsc_nl_rule_del(struct dmsc_nl *nl, const struct pol_rule *r)
{
	return rule_msg(nl, DMSC_CMD_RULE_DEL, r);
}

static int rule_one(struct nlattr **top, void *arg)
{
	struct nlattr *tb[DMSC_RULE_A_MAX + 1];
	struct vec *v = arg;
	struct pol_rule *r;
	int alen;

	if (!top[DMSC_A_RULE] ||
	    nla_parse_nested(tb, DMSC_RULE_A_MAX, top[DMSC_A_RULE], NULL) < 0)
		return 0;
	r = vec_add(v);
	if (!r)
		return -1;
	r->family = tb[DMSC_RULE_A_FAMILY] ? nla_get_u8(tb[DMSC_RULE_A_FAMILY]) :
					     AF_INET6;
	alen = r->family == AF_INET ? 4 : 16;
	if (tb[DMSC_RULE_A_DST] && nla_len(tb[DMSC_RULE_A_DST]) == alen)
		memcpy(r->dst, nla_data(tb[DMSC_RULE_A_DST]), (size_t)alen);
	r->dst_len = tb[DMSC_RULE_A_DST_LEN] ? nla_get_u8(tb[DMSC_RULE_A_DST_LEN]) : 0;
	r->src_len = tb[DMSC_RULE_A_SRC_LEN] ? nla_get_u8(tb[DMSC_RULE_A_SRC_LEN]) : 0;
	if (r->src_len && tb[DMSC_RULE_A_SRC] && nla_len(tb[DMSC_RULE_A_SRC]) == alen)
		memcpy(r->src, nla_data(tb[DMSC_RULE_A_SRC]), (size_t)alen);
	r->qpn_lo = tb[DMSC_RULE_A_QPN_LO] ? nla_get_u32(tb[DMSC_RULE_A_QPN_LO]) : 0;
	r->qpn_hi = tb[DMSC_RULE_A_QPN_HI] ? nla_get_u32(tb[DMSC_RULE_A_QPN_HI]) :
					     DMSC_QPN_MAX;
	r->tunnel = tb[DMSC_RULE_A_TUNNEL] ? nla_get_u32(tb[DMSC_RULE_A_TUNNEL]) : 0;
	return 0;
}

int dmsc_nl_rule_dump(struct dmsc_nl *nl, struct pol_rule **out, size_t *n)
{
	return dump(nl, DMSC_CMD_RULE_GET, sizeof(**out), rule_one,
		    (void **)out, n);
}
