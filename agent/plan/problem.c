// SPDX-License-Identifier: GPL-2.0
/*
 * problem.c - bind a model, sites and limits into one problem: layer
 * names resolved, the layers renumbered in a topological order (a cycle
 * is an error naming it), pins resolved, the data-parallel width chosen,
 * and every layer checked to fit on some site's GPU.
 */
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"

static int find_layer(const struct plan_model *m, const char *name)
{
	int i;

	for (i = 0; i < m->n; i++)
		if (!strcmp(m->l[i].name, name))
			return i;
	return -1;
}

static int find_site(const struct plan_sites *s, const char *name)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->s[i].name, name))
			return i;
	return -1;
}

/* Inputs by index; a layer without "inputs" follows the one before it. */
static int resolve_inputs(struct plan_model *m, char *err, size_t errlen)
{
	int i, j;

	for (i = 0; i < m->n; i++) {
		struct plan_layer *l = &m->l[i];

		for (j = 0; j < i; j++)
			if (!strcmp(m->l[j].name, l->name))
				return plan_fail(err, errlen, "%s.name: \"%s\" repeats %s",
						 l->path, l->name, m->l[j].path);
		if (l->nin < 0) {
			/* the first layer of the backbone or of a head starts it */
			if (i == 0 || m->l[i - 1].head != l->head) {
				l->nin = 0;
				continue;
			}
			l->nin = 1;
			l->in = plan_xcalloc(1, sizeof(int));
			l->in[0] = i - 1;
			continue;
		}
		l->in = plan_xcalloc(l->nin, sizeof(int));
	}
	for (i = 0; i < m->n; i++) {
		struct plan_layer *l = &m->l[i];

		for (j = 0; j < l->nin && l->in_names; j++) {
			int k = find_layer(m, l->in_names[j]);

			if (k < 0)
				return plan_fail(err, errlen, "%s.inputs[%d]: no layer \"%s\"",
						 l->path, j, l->in_names[j]);
			l->in[j] = k;
		}
	}
	return 0;
}

/* A cycle through a layer that never became ready, named. */
static int name_cycle(const struct plan_model *m, const int *indeg,
		      char *err, size_t errlen)
{
	int *seen = plan_xcalloc(m->n, sizeof(int));
	int v = 0, len = 0, j;
	char path[256] = "";

	while (v < m->n && !indeg[v])
		v++;
	/* walk inputs that are still blocked until a layer repeats */
	while (!seen[v]) {
		seen[v] = 1;
		for (j = 0; j < m->l[v].nin; j++)
			if (indeg[m->l[v].in[j]])
				break;
		v = m->l[v].in[j];
	}
	j = v;
	do {
		len += snprintf(path + len, len < (int)sizeof(path) ? sizeof(path) - len : 0,
				"%s%s", len ? " <- " : "", m->l[j].name);
		for (int q = 0; q < m->l[j].nin; q++)
			if (indeg[m->l[j].in[q]]) {
				j = m->l[j].in[q];
				break;
			}
	} while (j != v && len < (int)sizeof(path));
	free(seen);
	return plan_fail(err, errlen, "%s.inputs: cycle: %s <- %s",
			 m->l[v].path, path, m->l[v].name);
}

/* Kahn's algorithm, smallest input index first: a chain keeps its order
 * and each head's layers stay together after the backbone. */
static int topo_order(struct plan_model *m, char *err, size_t errlen)
{
	int n = m->n, i, j, done = 0, hn = 0;
	int *indeg = plan_xcalloc(n, sizeof(int));
	int *heap = plan_xcalloc(n, sizeof(int));
	int *order = plan_xcalloc(n, sizeof(int));
	int *newidx = plan_xcalloc(n, sizeof(int));
	struct plan_layer *nl;

	for (i = 0; i < n; i++)
		for (j = 0; j < m->l[i].nin; j++)
			indeg[i]++;
#define PUSH(x) do { int c = hn++; heap[c] = (x);			\
		while (c && heap[(c - 1) / 2] > heap[c]) {		\
			int t = heap[c]; heap[c] = heap[(c - 1) / 2];	\
			heap[(c - 1) / 2] = t; c = (c - 1) / 2; } } while (0)
	for (i = 0; i < n; i++)
		if (!indeg[i])
			PUSH(i);
	while (hn) {
		int v = heap[0], c = 0;

		heap[0] = heap[--hn];
		for (;;) {
			int a = 2 * c + 1, b = a + 1, s = c;

			if (a < hn && heap[a] < heap[s])
				s = a;
			if (b < hn && heap[b] < heap[s])
				s = b;
			if (s == c)
				break;
			j = heap[s]; heap[s] = heap[c]; heap[c] = j;
			c = s;
		}
		order[done++] = v;
		/* consumers of v: a scan, the models are small */
		for (i = 0; i < n; i++)
			for (j = 0; j < m->l[i].nin; j++)
				if (m->l[i].in[j] == v && !--indeg[i])
					PUSH(i);
	}
#undef PUSH
	if (done < n) {
		int rc = name_cycle(m, indeg, err, errlen);

		free(indeg); free(heap); free(order); free(newidx);
		return rc;
	}
	nl = plan_xcalloc(n, sizeof(*nl));
	for (i = 0; i < n; i++)
		newidx[order[i]] = i;
	for (i = 0; i < n; i++) {
		nl[i] = m->l[order[i]];
		for (j = 0; j < nl[i].nin; j++)
			nl[i].in[j] = newidx[nl[i].in[j]];
	}
	free(m->l);
	m->l = nl;
	free(indeg); free(heap); free(order); free(newidx);
	return 0;
}

static int consumers_count_ok(const struct plan_model *m)
{
	int i;

	for (i = 1; i < m->n; i++)
		if (m->l[i].nin != 1 || m->l[i].in[0] != i - 1)
			return 0;
	return m->l[0].nin == 0;
}

static double *prefix(const struct plan_model *m, size_t off)
{
	double *p = plan_xcalloc(m->n + 1, sizeof(double));
	int i;

	for (i = 0; i < m->n; i++)
		p[i + 1] = p[i] + *(const double *)((const char *)&m->l[i] + off);
	return p;
}

/* The width: the largest power of two leaving room for all stages. */
static int default_width(const struct plan_sites *s, int stages)
{
	int d, best = 1, i, maxg = 0;

	for (i = 0; i < s->n; i++)
		if (s->s[i].gpus > maxg)
			maxg = s->s[i].gpus;
	for (d = 1; d <= maxg; d *= 2) {
		int room = 0;

		for (i = 0; i < s->n; i++)
			room += s->s[i].gpus / d;
		if (room >= stages)
			best = d;
	}
	return best;
}

struct plan_problem *plan_problem_new(struct plan_model *m,
				      struct plan_sites *s,
				      const struct plan_limits *l,
				      char *err, size_t errlen)
{
	struct plan_problem *pb = plan_xcalloc(1, sizeof(*pb));
	double maxmem = 0;
	int i, room = 0;

	pb->m = m;
	pb->s = s;
	pb->lim = *l;
	pb->lim.pins = NULL;
	pb->lim.npins = 0;
	if (resolve_inputs(m, err, errlen) || topo_order(m, err, errlen))
		goto bad;
	pb->chain = consumers_count_ok(m);
	pb->d = l->gpus_per_stage ? l->gpus_per_stage :
		default_width(s, l->stages);
	for (i = 0; i < s->n; i++) {
		pb->cap[i] = s->s[i].gpus / pb->d;
		room += pb->cap[i];
		if (pb->cap[i] && s->s[i].mem > maxmem)
			maxmem = s->s[i].mem;
	}
	if (!room) {
		plan_fail(err, errlen, "gpus_per_stage: %d is more GPUs than any site has",
			  pb->d);
		goto bad;
	}
	if (pb->lim.stages > room)
		pb->lim.stages = room;
	if (pb->lim.stages > m->n)
		pb->lim.stages = m->n;
	if (pb->lim.stages > PLAN_MAX_STAGES)
		pb->lim.stages = PLAN_MAX_STAGES;
	/* a layer alone, one micro-batch in flight, on the largest GPU */
	for (i = 0; i < m->n; i++) {
		const struct plan_layer *y = &m->l[i];
		double need = y->mem + y->act / pb->d;

		if (need > maxmem) {
			plan_fail(err, errlen, "%s.memory_bytes: the layer \"%s\" needs %.4g bytes per GPU (memory_bytes + activation_bytes / %d GPUs), the largest GPU has %.4g: it fits nowhere",
				  y->path, y->name, need, pb->d, maxmem);
			goto bad;
		}
	}
	pb->pin = plan_xcalloc(m->n, sizeof(int));
	for (i = 0; i < m->n; i++)
		pb->pin[i] = -1;
	for (i = 0; i < l->npins; i++) {
		int y = find_layer(m, l->pins[i].layer);
		int t = find_site(s, l->pins[i].site);

		if (y < 0) {
			plan_fail(err, errlen, "pinned.%s: no layer \"%s\"",
				  l->pins[i].layer, l->pins[i].layer);
			goto bad;
		}
		if (t < 0) {
			plan_fail(err, errlen, "pinned.%s: no site \"%s\"",
				  l->pins[i].layer, l->pins[i].site);
			goto bad;
		}
		if (!pb->cap[t]) {
			plan_fail(err, errlen, "pinned.%s: site \"%s\" has fewer than %d GPUs (gpus_per_stage)",
				  l->pins[i].layer, l->pins[i].site, pb->d);
			goto bad;
		}
		if (m->l[y].mem + m->l[y].act / pb->d > s->s[t].mem) {
			plan_fail(err, errlen, "pinned.%s: the layer does not fit on site \"%s\"'s GPUs",
				  l->pins[i].layer, l->pins[i].site);
			goto bad;
		}
		pb->pin[y] = t;
		plan_limits_add_pin(&pb->lim, l->pins[i].layer, l->pins[i].site);
	}
	pb->pf = prefix(m, offsetof(struct plan_layer, fwd));
	pb->pb = prefix(m, offsetof(struct plan_layer, bwd));
	pb->pp = prefix(m, offsetof(struct plan_layer, param));
	pb->pm = prefix(m, offsetof(struct plan_layer, mem));
	pb->pa = prefix(m, offsetof(struct plan_layer, act));
	for (i = 0; i < s->n; i++) {
		int j;

		pb->pinned_other[i] = plan_xcalloc(m->n + 1, sizeof(int));
		for (j = 0; j < m->n; j++)
			pb->pinned_other[i][j + 1] = pb->pinned_other[i][j] +
				(pb->pin[j] >= 0 && pb->pin[j] != i);
	}
	return pb;
bad:
	plan_problem_free(pb);
	return NULL;
}

void plan_problem_free(struct plan_problem *pb)
{
	int i;

	if (!pb)
		return;
	plan_model_free(pb->m);
	plan_sites_free(pb->s);
	plan_limits_clear(&pb->lim);
	free(pb->pin);
	free(pb->pf);
	free(pb->pb);
	free(pb->pp);
	free(pb->pm);
	free(pb->pa);
	for (i = 0; i < PLAN_MAX_SITES; i++)
		free(pb->pinned_other[i]);
	free(pb);
}

int plan_problem_is_chain(const struct plan_problem *pb)
{
	return pb->chain;
}

int plan_problem_layers(const struct plan_problem *pb)
{
	return pb->m->n;
}

const char *plan_layer_name(const struct plan_problem *pb, int i)
{
	return pb->m->l[i].name;
}
