// SPDX-License-Identifier: GPL-2.0
/*
 * backup.c - pre-computed protection for an admitted demand: one path from
 * its ingress set to its egress set that survives the failure the user
 * asked to be protected against.
 *
 *   link: no link (either direction) of the primary DAG;
 *   node: no transit node of the primary DAG, and no link of it;
 *   srlg: no link sharing a risk group with any link of the primary.
 *
 * It must meet the demand's own constraints (colours, max_delay).  Among
 * such paths we take the cheapest under the current congestion lengths, so
 * a backup steers clear of hot links; whether it would fit at the full
 * bandwidth today is reported, not reserved (backups are not booked, as in
 * facility protection they share the spare capacity).  Its segment list
 * must fit in max_sids like the primary's, or there is no backup.
 */
#include <stdlib.h>
#include <string.h>

#include "mpte_int.h"

static const char *prot_name(enum mpte_protection p)
{
	switch (p) {
	case MPTE_PROTECT_LINK:
		return "link";
	case MPTE_PROTECT_NODE:
		return "node";
	case MPTE_PROTECT_SRLG:
		return "srlg";
	default:
		return "none";
	}
}

static int shares_srlg(const struct mpte_arc *a, const struct mpte_arc *b)
{
	int i, j;

	for (i = 0; i < a->nsrlg; i++)
		for (j = 0; j < b->nsrlg; j++)
			if (a->srlg[i] == b->srlg[j])
				return 1;
	return 0;
}

void mpte_compute_backup(struct mpte_ctx *ctx, int di)
{
	const struct mpte_topology *t = ctx->t;
	const struct mpte_demand *d = &ctx->ds->d[di];
	struct mpte_dstate *s = &ctx->st[di];
	unsigned char *arc_off, *node_off;
	int *buf, n, p, i, j, b, k;

	free(s->backup.arcs);
	memset(&s->backup, 0, sizeof(s->backup));
	free(s->backup_reason);
	s->backup_reason = NULL;
	if (d->protection == MPTE_PROTECT_NONE || s->status != MPTE_ADMITTED)
		return;

	arc_off = mpte_xcalloc(t->narcs, 1);
	node_off = mpte_xcalloc(t->nnodes, 1);
	buf = mpte_xcalloc(t->nnodes + 1, sizeof(int));
	for (p = 0; p < s->npaths; p++)
		for (i = 0; i < s->paths[p].len; i++) {
			const struct mpte_arc *a = &t->arcs[s->paths[p].arcs[i]];
			int v = a->to;

			arc_off[s->paths[p].arcs[i]] = 1;
			if (a->reverse >= 0)
				arc_off[a->reverse] = 1;
			if (d->protection == MPTE_PROTECT_NODE) {
				for (j = 0; j < d->negress; j++)
					if (d->egress[j] == v)
						break;
				if (j == d->negress)
					node_off[v] = 1;
			}
			if (d->protection == MPTE_PROTECT_SRLG && a->nsrlg)
				for (b = 0; b < t->narcs; b++)
					if (shares_srlg(a, &t->arcs[b]))
						arc_off[b] = 1;
		}
	/* an ingress is never a transit node to avoid */
	for (j = 0; j < d->ningress; j++)
		node_off[d->ingress[j]] = 0;

	/* a backup is a detour by nature: the hop limit is the primary's */
	ctx->ignore_hops = 1;
	n = mpte_best_path(ctx, di, ctx->len, arc_off, node_off, buf,
			   t->nnodes + 1);
	ctx->ignore_hops = 0;
	if (n < 0) {
		char msg[128];

		snprintf(msg, sizeof(msg), "no %s-disjoint path meets the demand's constraints",
			 prot_name(d->protection));
		s->backup_reason = mpte_xstrdup(msg);
	} else if ((k = mpte_segments_over(mpte_sids(ctx), buf, n,
					   mpte_max_sids(ctx, di)))) {
		/* the data plane could not install it */
		char msg[128];

		snprintf(msg, sizeof(msg), "the %s-disjoint path found needs %d SIDs, max_sids is %d",
			 prot_name(d->protection), k, mpte_max_sids(ctx, di));
		s->backup_reason = mpte_xstrdup(msg);
	} else {
		s->backup.arcs = mpte_xcalloc(n ? n : 1, sizeof(int));
		memcpy(s->backup.arcs, buf, n * sizeof(int));
		s->backup.len = n;
		s->backup.flow = s->admitted;
	}
	free(arc_off);
	free(node_off);
	free(buf);
}
