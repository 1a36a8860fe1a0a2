// SPDX-License-Identifier: GPL-2.0
/*
 * json_io.c - read the topology and demand documents.
 *
 * Every error names the field as a path a user can find in the file
 * ("demands[3].bandwidth: expected a number"), because a bad number in a
 * 10,000-demand file is otherwise hopeless to locate.  The schema is in
 * Documentation/mpte.md.  A key the schema does not know is an error (a
 * typo such as "bandwith" would otherwise be a silent default), and so is
 * a repeated node name, link id, demand id or SID.  SIDs are IPv6 addresses,
 * kept in canonical form so that the result reads as the kernel prints them.
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <linux/dmsc.h>

#include "mpte_int.h"
#include "json_strict.h"

struct perr {
	char *buf;
	size_t len;
	int set;
};

static void fail(struct perr *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct perr *e, const char *fmt, ...)
{
	va_list ap;

	if (e->set)
		return;
	e->set = 1;
	va_start(ap, fmt);
	vsnprintf(e->buf, e->len, fmt, ap);
	va_end(ap);
}

static const char *type_name(struct json_object *o)
{
	return json_type_to_name(json_object_get_type(o));
}

/* Optional number: returns 0 if absent (dflt kept), 1 if read, -1 bad. */
static int get_number(struct json_object *o, const char *key,
		      const char *where, double *out, struct perr *e)
{
	struct json_object *v;
	enum json_type ty;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return 0;
	ty = json_object_get_type(v);
	if (ty != json_type_double && ty != json_type_int) {
		fail(e, "%s.%s: expected a number, got %s", where, key,
		     type_name(v));
		return -1;
	}
	*out = json_object_get_double(v);
	if (!isfinite(*out)) {
		fail(e, "%s.%s: not a finite number", where, key);
		return -1;
	}
	return 1;
}

static int get_nonneg(struct json_object *o, const char *key,
		      const char *where, double *out, struct perr *e)
{
	int r = get_number(o, key, where, out, e);

	if (r == 1 && *out < 0) {
		fail(e, "%s.%s: must not be negative", where, key);
		return -1;
	}
	return r;
}

static int get_int(struct json_object *o, const char *key, const char *where,
		   int lo, int hi, int *out, struct perr *e)
{
	struct json_object *v;
	int64_t x;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return 0;
	if (json_object_get_type(v) != json_type_int) {
		fail(e, "%s.%s: expected an integer, got %s", where, key,
		     type_name(v));
		return -1;
	}
	x = json_object_get_int64(v);
	if (x < lo || x > hi) {
		fail(e, "%s.%s: %lld is out of range %d..%d", where, key,
		     (long long)x, lo, hi);
		return -1;
	}
	*out = (int)x;
	return 1;
}

static const char *get_string(struct json_object *o, const char *key,
			      const char *where, int required, struct perr *e)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !v) {
		if (required)
			fail(e, "%s.%s: missing", where, key);
		return NULL;
	}
	if (json_object_get_type(v) != json_type_string) {
		fail(e, "%s.%s: expected a string, got %s", where, key,
		     type_name(v));
		return NULL;
	}
	return json_object_get_string(v);
}

static int get_bool(struct json_object *o, const char *key, const char *where,
		    int dflt, struct perr *e)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return dflt;
	if (json_object_get_type(v) != json_type_boolean) {
		fail(e, "%s.%s: expected true or false, got %s", where, key,
		     type_name(v));
		return dflt;
	}
	return json_object_get_boolean(v);
}

static struct json_object *get_array(struct json_object *o, const char *key,
				     const char *where, int required,
				     struct perr *e)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !v) {
		if (required)
			fail(e, "%s%s%s: missing", where, *where ? "." : "",
			     key);
		return NULL;
	}
	if (json_object_get_type(v) != json_type_array) {
		fail(e, "%s%s%s: expected an array, got %s", where,
		     *where ? "." : "", key, type_name(v));
		return NULL;
	}
	return v;
}

/* Every key of o must be one of known (NULL-terminated). */
static int check_keys(struct json_object *o, const char *where,
		      const char *const *known, struct perr *e)
{
	const char *key = json_strict_unknown_key(o, known, NULL);

	if (key) {
		fail(e, "%s: unknown key \"%s\"", where, key);
		return -1;
	}
	return 0;
}

/* "max_stretch": 0 (no bound) or a ratio of at least 1. */
static int get_stretch(struct json_object *o, const char *where, double *out,
		       struct perr *e)
{
	double x;
	int r = get_number(o, "max_stretch", where, &x, e);

	if (r != 1)
		return r;
	if (x != 0 && !(x >= 1 && x <= MPTE_MAX_HOPS)) {
		fail(e, "%s.max_stretch: %g is neither 0 (no bound) nor a ratio 1..%d",
		     where, x, MPTE_MAX_HOPS);
		return -1;
	}
	*out = x;
	return 1;
}

/*
 * An optional SID: an IPv6 address, returned in canonical form (malloc'd),
 * NULL if absent or bad (e->set tells which).
 */
static char *get_sid(struct json_object *o, const char *key, const char *where,
		     struct perr *e)
{
	const char *s = get_string(o, key, where, 0, e);
	struct in6_addr a;
	char buf[INET6_ADDRSTRLEN];

	if (!s)
		return NULL;
	if (inet_pton(AF_INET6, s, &a) != 1) {
		fail(e, "%s.%s: \"%s\" is not an IPv6 address", where, key, s);
		return NULL;
	}
	inet_ntop(AF_INET6, &a, buf, sizeof(buf));
	return mpte_xstrdup(buf);
}

/*
 * Colours: an integer bitmask, or an array of colour names (declared in the
 * topology's "colours" object) and bit numbers.
 */
static int parse_colours(const struct mpte_topology *t, struct json_object *o,
			 const char *key, const char *where, uint32_t *out,
			 struct perr *e)
{
	struct json_object *v;
	size_t i;

	*out = 0;
	if (!json_object_object_get_ex(o, key, &v) || !v)
		return 0;
	if (json_object_get_type(v) == json_type_int) {
		int64_t x = json_object_get_int64(v);

		if (x < 0 || x > 0xffffffffLL) {
			fail(e, "%s.%s: bitmask must fit in 32 bits", where,
			     key);
			return -1;
		}
		*out = (uint32_t)x;
		return 1;
	}
	if (json_object_get_type(v) != json_type_array) {
		fail(e, "%s.%s: expected a bitmask or an array of colours",
		     where, key);
		return -1;
	}
	for (i = 0; i < json_object_array_length(v); i++) {
		struct json_object *c = json_object_array_get_idx(v, i);
		int bit = -1, k;

		if (c && json_object_get_type(c) == json_type_int) {
			bit = json_object_get_int(c);
			if (bit < 0 || bit > 31)
				bit = -2;
		} else if (c && json_object_get_type(c) == json_type_string) {
			for (k = 0; k < t->ncolours; k++)
				if (t->colour_names[k] &&
				    !strcmp(t->colour_names[k],
					    json_object_get_string(c)))
					bit = k;
			if (bit < 0) {
				fail(e, "%s.%s[%zu]: unknown colour \"%s\"",
				     where, key, i, json_object_get_string(c));
				return -1;
			}
		}
		if (bit < 0) {
			fail(e, "%s.%s[%zu]: expected a colour name or a bit 0..31",
			     where, key, i);
			return -1;
		}
		*out |= 1u << bit;
	}
	return 1;
}

static int parse_colour_names(struct mpte_topology *t, struct json_object *o,
			      struct perr *e)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, "colours", &v) || !v)
		return 0;
	if (json_object_get_type(v) != json_type_object) {
		fail(e, "colours: expected an object of name: bit");
		return -1;
	}
	t->ncolours = 32;
	t->colour_names = mpte_xcalloc(32, sizeof(char *));
	json_object_object_foreach(v, name, bitobj) {
		int bit;

		if (!bitobj || json_object_get_type(bitobj) != json_type_int ||
		    (bit = json_object_get_int(bitobj)) < 0 || bit > 31) {
			fail(e, "colours.%s: expected a bit number 0..31", name);
			return -1;
		}
		free(t->colour_names[bit]);
		t->colour_names[bit] = mpte_xstrdup(name);
	}
	return 0;
}

static char *arc_name(const struct mpte_topology *t, int from, int to)
{
	size_t n = strlen(t->nodes[from].name) + strlen(t->nodes[to].name) + 3;
	char *s = mpte_xcalloc(n, 1);

	snprintf(s, n, "%s->%s", t->nodes[from].name, t->nodes[to].name);
	return s;
}

/*
 * What messages call an arc: "A->B", or "A->B (id)" when a parallel link
 * also goes from A to B, so a reason names the one link it means.
 */
static void label_arcs(struct mpte_topology *t)
{
	int a, k;

	for (a = 0; a < t->narcs; a++) {
		const struct mpte_arc *arc = &t->arcs[a];
		const char *id = t->links[arc->link].id;
		size_t n;
		int parallel = 0;

		for (k = t->out_start[arc->from]; k < t->out_start[arc->from + 1]; k++)
			if (t->out_arc[k] != a && t->arcs[t->out_arc[k]].to == arc->to)
				parallel = 1;
		if (!parallel) {
			t->arcs[a].label = mpte_xstrdup(arc->name);
			continue;
		}
		n = strlen(arc->name) + strlen(id) + 4;
		t->arcs[a].label = mpte_xcalloc(n, 1);
		snprintf(t->arcs[a].label, n, "%s (%s)", arc->name, id);
	}
}

static const char *const link_keys[] = {
	"from", "to", "id", "capacity", "te_metric", "igp_metric", "delay",
	"colours", "srlg", "reserved", "adj_sid", "reverse_adj_sid",
	"bidirectional", NULL
};

static int parse_link(struct mpte_topology *t, struct json_object *l,
		      size_t li, struct perr *e)
{
	char where[48];
	const char *from, *to, *id;
	char *adj, *radj;
	struct mpte_arc a;
	struct json_object *v;
	int bidir, f, g, k;
	double x;

	snprintf(where, sizeof(where), "links[%zu]", li);
	if (!l || json_object_get_type(l) != json_type_object) {
		fail(e, "%s: expected an object", where);
		return -1;
	}
	memset(&a, 0, sizeof(a));
	if (check_keys(l, where, link_keys, e))
		return -1;
	from = get_string(l, "from", where, 1, e);
	to = get_string(l, "to", where, 1, e);
	if (e->set)
		return -1;
	f = mpte_node_lookup(t, from);
	g = mpte_node_lookup(t, to);
	if (f < 0) {
		fail(e, "%s.from: unknown node \"%s\"", where, from);
		return -1;
	}
	if (g < 0) {
		fail(e, "%s.to: unknown node \"%s\"", where, to);
		return -1;
	}
	if (f == g) {
		fail(e, "%s.to: a link must join two different nodes", where);
		return -1;
	}
	bidir = get_bool(l, "bidirectional", where, 1, e);
	if (get_number(l, "capacity", where, &a.capacity, e) == 0)
		fail(e, "%s.capacity: missing", where);
	else if (!e->set && a.capacity <= 0)
		fail(e, "%s.capacity: must be positive", where);
	a.te_metric = 1;
	get_nonneg(l, "te_metric", where, &a.te_metric, e);
	a.igp_metric = a.te_metric;
	get_nonneg(l, "igp_metric", where, &a.igp_metric, e);
	get_nonneg(l, "delay", where, &a.delay, e);
	parse_colours(t, l, "colours", where, &a.colours, e);
	if (e->set)
		return -1;

	if ((v = get_array(l, "srlg", where, 0, e))) {
		a.nsrlg = json_object_array_length(v);
		a.srlg = mpte_xcalloc(a.nsrlg, sizeof(int));
		for (k = 0; k < a.nsrlg; k++) {
			struct json_object *s = json_object_array_get_idx(v, k);

			if (!s || json_object_get_type(s) != json_type_int) {
				fail(e, "%s.srlg[%d]: expected an integer",
				     where, k);
				free(a.srlg);
				return -1;
			}
			a.srlg[k] = json_object_get_int(s);
		}
	}
	if (json_object_object_get_ex(l, "reserved", &v) && v) {
		/* one number = priority 0, or an array indexed by priority */
		if (json_object_get_type(v) == json_type_array) {
			if (json_object_array_length(v) > MPTE_PRIORITIES)
				fail(e, "%s.reserved: at most 8 priorities",
				     where);
			for (k = 0; !e->set &&
			     k < (int)json_object_array_length(v); k++) {
				struct json_object *r =
					json_object_array_get_idx(v, k);
				enum json_type ty = r ? json_object_get_type(r)
						      : json_type_null;

				if (ty != json_type_int && ty != json_type_double) {
					fail(e, "%s.reserved[%d]: expected a number",
					     where, k);
					break;
				}
				x = json_object_get_double(r);
				if (!isfinite(x))
					fail(e, "%s.reserved[%d]: not a finite number",
					     where, k);
				else if (x < 0)
					fail(e, "%s.reserved[%d]: must not be negative",
					     where, k);
				a.reserved[k] = x;
			}
		} else if (get_nonneg(l, "reserved", where, &x, e) == 1) {
			a.reserved[0] = x;
		}
	}
	id = get_string(l, "id", where, 0, e);
	if (!e->set && id && !*id)
		fail(e, "%s.id: must not be empty", where);
	adj = e->set ? NULL : get_sid(l, "adj_sid", where, e);
	radj = e->set ? NULL : get_sid(l, "reverse_adj_sid", where, e);
	if (!e->set && radj && !bidir)
		fail(e, "%s.reverse_adj_sid: the link is not bidirectional",
		     where);
	if (e->set) {
		free(a.srlg);
		free(adj);
		free(radj);
		return -1;
	}

	t->links[t->nlinks].arc[0] = t->narcs;
	t->links[t->nlinks].arc[1] = bidir ? t->narcs + 1 : -1;
	if (id) {
		t->links[t->nlinks].id = mpte_xstrdup(id);
	} else {
		size_t n = strlen(from) + strlen(to) + 2;

		t->links[t->nlinks].id = mpte_xcalloc(n, 1);
		snprintf(t->links[t->nlinks].id, n, "%s-%s", from, to);
	}
	a.from = f;
	a.to = g;
	a.link = t->nlinks;
	a.reverse = bidir ? t->narcs + 1 : -1;
	a.adj_sid = adj;
	a.name = arc_name(t, f, g);
	t->arcs[t->narcs++] = a;
	if (bidir) {
		a.from = g;
		a.to = f;
		a.reverse = t->narcs - 1;
		a.adj_sid = radj;
		a.name = arc_name(t, g, f);
		if (a.nsrlg) {
			int *s = mpte_xcalloc(a.nsrlg, sizeof(int));

			memcpy(s, a.srlg, a.nsrlg * sizeof(int));
			a.srlg = s;
		}
		t->arcs[t->narcs++] = a;
	}
	t->nlinks++;
	return 0;
}

struct named {
	const char *key;	/* what must be unique */
	char field[64];		/* where it was given */
	size_t order;		/* its place in the file */
};

static int cmp_named(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	/* equal keys in file order, so the later one is reported */
	return c ? c : (x->order < y->order ? -1 : x->order > y->order);
}

/* The first repeat among n keys, reported at its second occurrence. */
static int check_unique(struct named *v, size_t n, const char *what,
			struct perr *e)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i].order = i;
	qsort(v, n, sizeof(*v), cmp_named);
	for (i = 1; i < n; i++)
		if (!strcmp(v[i - 1].key, v[i].key)) {
			fail(e, "%s: duplicate %s \"%s\" (also %s)", v[i].field,
			     what, v[i].key, v[i - 1].field);
			return -1;
		}
	return 0;
}

/* Node names, link ids and SIDs (node and adjacency alike) are unique. */
static int check_topology_unique(const struct mpte_topology *t,
				 struct perr *e)
{
	struct named *v = mpte_xcalloc(t->nnodes + t->narcs + t->nlinks + 1,
				       sizeof(*v));
	size_t n = 0;
	int i, rc = 0;

	for (i = 0; i < t->nnodes; i++) {
		v[n].key = t->nodes[i].name;
		snprintf(v[n++].field, sizeof(v[0].field), "nodes[%d].name", i);
	}
	rc = check_unique(v, n, "name", e);
	for (n = 0, i = 0; !rc && i < t->nlinks; i++) {
		v[n].key = t->links[i].id;
		snprintf(v[n++].field, sizeof(v[0].field), "links[%d].id", i);
	}
	/* an id left out defaults to "from-to": parallel links need one */
	rc = rc ? rc : check_unique(v, n, "id", e);
	for (n = 0, i = 0; !rc && i < t->nnodes; i++)
		if (t->nodes[i].sid) {
			v[n].key = t->nodes[i].sid;
			snprintf(v[n++].field, sizeof(v[0].field),
				 "nodes[%d].sid", i);
		}
	for (i = 0; !rc && i < t->narcs; i++)
		if (t->arcs[i].adj_sid) {
			int l = t->arcs[i].link;

			v[n].key = t->arcs[i].adj_sid;
			snprintf(v[n++].field, sizeof(v[0].field), "links[%d].%s",
				 l, t->links[l].arc[0] == i ? "adj_sid"
							    : "reverse_adj_sid");
		}
	rc = rc ? rc : check_unique(v, n, "SID", e);
	free(v);
	return rc;
}

static const char *const topology_keys[] = {
	"nodes", "links", "colours", "max_sids", "max_stretch", "max_hops", NULL
};
static const char *const node_keys[] = { "name", "sid", "locator", NULL };

struct mpte_topology *mpte_topology_from_json(struct json_object *obj,
					      char *err, size_t errlen)
{
	struct perr e = { err, errlen, 0 };
	struct mpte_topology *t;
	struct json_object *nodes, *links;
	size_t i, n;

	if (!obj || json_object_get_type(obj) != json_type_object) {
		snprintf(err, errlen, "topology: expected a JSON object");
		return NULL;
	}
	t = mpte_xcalloc(1, sizeof(*t));
	t->max_sids = DMSC_MAX_SEGS;
	if (check_keys(obj, "topology", topology_keys, &e))
		goto bad;
	nodes = get_array(obj, "nodes", "", 1, &e);
	links = get_array(obj, "links", "", 1, &e);
	if (e.set)
		goto bad;
	t->max_stretch = MPTE_DEFAULT_MAX_STRETCH;
	if (get_stretch(obj, "topology", &t->max_stretch, &e) < 0 ||
	    get_int(obj, "max_hops", "topology", 1, MPTE_MAX_HOPS, &t->max_hops,
		    &e) < 0)
		goto bad;
	if (get_int(obj, "max_sids", "topology", 1, DMSC_MAX_SEGS,
		    &t->max_sids, &e) < 0)
		goto bad;
	parse_colour_names(t, obj, &e);
	if (e.set)
		goto bad;

	n = json_object_array_length(nodes);
	t->nodes = mpte_xcalloc(n, sizeof(*t->nodes));
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(nodes, i);
		char where[48];
		const char *name;
		char *sid;

		snprintf(where, sizeof(where), "nodes[%zu]", i);
		if (!o || json_object_get_type(o) != json_type_object) {
			fail(&e, "%s: expected an object", where);
			goto bad;
		}
		if (check_keys(o, where, node_keys, &e))
			goto bad;
		name = get_string(o, "name", where, 1, &e);
		if (e.set)
			goto bad;
		if (!*name) {
			fail(&e, "%s.name: must not be empty", where);
			goto bad;
		}
		if (json_object_object_get_ex(o, "sid", NULL) &&
		    json_object_object_get_ex(o, "locator", NULL)) {
			fail(&e, "%s: sid and locator are the same thing: give one",
			     where);
			goto bad;
		}
		sid = get_sid(o, "sid", where, &e);
		if (!sid && !e.set)
			sid = get_sid(o, "locator", where, &e);
		if (e.set)
			goto bad;
		/* no SID: solvable, but no list through it is installable */
		t->nodes[i].name = mpte_xstrdup(name);
		t->nodes[i].sid = sid;
		t->nnodes++;
	}
	if (mpte_topology_index(t)) {
		/* check_topology_unique below names the repeat */
		t->nlinks = t->narcs = 0;
		check_topology_unique(t, &e);
		if (!e.set)
			fail(&e, "nodes: duplicate node name");
		goto bad;
	}

	n = json_object_array_length(links);
	t->links = mpte_xcalloc(n, sizeof(*t->links));
	t->arcs = mpte_xcalloc(2 * n, sizeof(*t->arcs));
	for (i = 0; i < n; i++)
		if (parse_link(t, json_object_array_get_idx(links, i), i, &e))
			goto bad;
	if (check_topology_unique(t, &e))
		goto bad;
	/* the CSR was built before the arcs existed: rebuild it */
	free(t->out_start);
	free(t->out_arc);
	free(t->out_to);
	free(t->node_hash);
	t->out_start = t->out_arc = t->out_to = t->node_hash = NULL;
	mpte_topology_index(t);
	label_arcs(t);
	return t;
bad:
	mpte_topology_free(t);
	return NULL;
}

void mpte_topology_free(struct mpte_topology *t)
{
	int i;

	if (!t)
		return;
	for (i = 0; i < t->nnodes; i++) {
		free(t->nodes[i].name);
		free(t->nodes[i].sid);
	}
	for (i = 0; i < t->narcs; i++) {
		free(t->arcs[i].srlg);
		free(t->arcs[i].adj_sid);
		free(t->arcs[i].name);
		free(t->arcs[i].label);
	}
	for (i = 0; i < t->nlinks; i++)
		free(t->links[i].id);
	if (t->colour_names)
		for (i = 0; i < t->ncolours; i++)
			free(t->colour_names[i]);
	free(t->colour_names);
	free(t->nodes);
	free(t->arcs);
	free(t->links);
	free(t->out_start);
	free(t->out_arc);
	free(t->out_to);
	free(t->node_hash);
	free(t);
}

/* "ingress": "X1" or ["X1", "X2"] */
static int parse_node_set(const struct mpte_topology *t, struct json_object *o,
			  const char *key, const char *where, int **out,
			  int *nout, struct perr *e)
{
	struct json_object *v;
	size_t i, n;

	if (!json_object_object_get_ex(o, key, &v) || !v) {
		fail(e, "%s.%s: missing", where, key);
		return -1;
	}
	if (json_object_get_type(v) == json_type_string) {
		int k = mpte_node_lookup(t, json_object_get_string(v));

		if (k < 0) {
			fail(e, "%s.%s: unknown node \"%s\"", where, key,
			     json_object_get_string(v));
			return -1;
		}
		*out = mpte_xcalloc(1, sizeof(int));
		(*out)[0] = k;
		*nout = 1;
		return 0;
	}
	if (json_object_get_type(v) != json_type_array ||
	    !(n = json_object_array_length(v))) {
		fail(e, "%s.%s: expected a node name or a non-empty array of names",
		     where, key);
		return -1;
	}
	*out = mpte_xcalloc(n, sizeof(int));
	*nout = 0;
	for (i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(v, i);
		int k, j;

		if (!s || json_object_get_type(s) != json_type_string) {
			fail(e, "%s.%s[%zu]: expected a node name", where, key,
			     i);
			return -1;
		}
		k = mpte_node_lookup(t, json_object_get_string(s));
		if (k < 0) {
			fail(e, "%s.%s[%zu]: unknown node \"%s\"", where, key,
			     i, json_object_get_string(s));
			return -1;
		}
		for (j = 0; j < *nout; j++)
			if ((*out)[j] == k)
				break;
		if (j == *nout)
			(*out)[(*nout)++] = k;
	}
	return 0;
}

static const char *const demand_keys[] = {
	"id", "ingress", "egress", "bandwidth", "elastic", "setup_priority",
	"hold_priority", "include_any", "include_all", "exclude_any",
	"max_delay", "max_paths", "max_sids", "max_stretch", "max_hops",
	"protection", "existing", NULL
};
static const char *const elastic_keys[] = { "min", "max", NULL };

static int parse_demand(const struct mpte_topology *t, struct json_object *o,
			size_t di, struct mpte_demand *d, struct perr *e)
{
	char where[48];
	const char *id, *prot;
	struct json_object *el;
	int has_bw, i, j;

	snprintf(where, sizeof(where), "demands[%zu]", di);
	if (!o || json_object_get_type(o) != json_type_object) {
		fail(e, "%s: expected an object", where);
		return -1;
	}
	if (check_keys(o, where, demand_keys, e))
		return -1;
	id = get_string(o, "id", where, 0, e);
	if (e->set)
		return -1;
	if (id && !*id) {
		fail(e, "%s.id: must not be empty", where);
		return -1;
	}
	if (id) {
		d->id = mpte_xstrdup(id);
	} else {
		d->id = mpte_xcalloc(24, 1);
		snprintf(d->id, 24, "d%zu", di);
	}
	if (parse_node_set(t, o, "ingress", where, &d->ingress, &d->ningress,
			   e) ||
	    parse_node_set(t, o, "egress", where, &d->egress, &d->negress, e))
		return -1;
	for (i = 0; i < d->ningress; i++)
		for (j = 0; j < d->negress; j++)
			if (d->ingress[i] == d->egress[j]) {
				fail(e, "%s.egress: node \"%s\" is also an ingress",
				     where, t->nodes[d->egress[j]].name);
				return -1;
			}

	has_bw = get_number(o, "bandwidth", where, &d->bandwidth, e);
	if (has_bw < 0)
		return -1;
	if (json_object_object_get_ex(o, "elastic", &el) && el) {
		char ew[64];

		snprintf(ew, sizeof(ew), "%s.elastic", where);
		if (json_object_get_type(el) != json_type_object) {
			fail(e, "%s: expected an object {min, max}", ew);
			return -1;
		}
		if (check_keys(el, ew, elastic_keys, e))
			return -1;
		if (get_number(el, "min", ew, &d->bw_min, e) != 1 ||
		    get_number(el, "max", ew, &d->bw_max, e) != 1) {
			fail(e, "%s: needs numbers min and max", ew);
			return -1;
		}
		if (d->bw_min <= 0 || d->bw_max < d->bw_min) {
			fail(e, "%s: need 0 < min <= max", ew);
			return -1;
		}
		d->elastic = 1;
		if (!has_bw)
			d->bandwidth = d->bw_max;
		if (d->bandwidth < d->bw_min || d->bandwidth > d->bw_max) {
			fail(e, "%s.bandwidth: %g is outside the elastic range %g..%g",
			     where, d->bandwidth, d->bw_min, d->bw_max);
			return -1;
		}
	} else {
		if (!has_bw) {
			fail(e, "%s.bandwidth: missing", where);
			return -1;
		}
		d->bw_min = d->bw_max = d->bandwidth;
	}
	if (d->bandwidth <= 0) {
		fail(e, "%s.bandwidth: must be positive", where);
		return -1;
	}

	d->setup = MPTE_PRIORITIES - 1;
	if (get_int(o, "setup_priority", where, 0, 7, &d->setup, e) < 0)
		return -1;
	d->hold = d->setup;
	if (get_int(o, "hold_priority", where, 0, 7, &d->hold, e) < 0)
		return -1;
	if (d->hold > d->setup) {
		/* RFC 3209: a tunnel that could be preempted by its own
		 * setup priority would flap */
		fail(e, "%s.hold_priority: %d is worse than setup_priority %d",
		     where, d->hold, d->setup);
		return -1;
	}
	if (parse_colours(t, o, "include_any", where, &d->include_any, e) < 0 ||
	    parse_colours(t, o, "include_all", where, &d->include_all, e) < 0 ||
	    parse_colours(t, o, "exclude_any", where, &d->exclude_any, e) < 0)
		return -1;
	if (get_nonneg(o, "max_delay", where, &d->max_delay, e) < 0)
		return -1;
	d->max_paths = MPTE_DEFAULT_MAX_PATHS;
	if (get_int(o, "max_paths", where, 1, 64, &d->max_paths, e) < 0)
		return -1;
	d->max_sids = t->max_sids;
	if (get_int(o, "max_sids", where, 1, DMSC_MAX_SEGS, &d->max_sids, e) < 0)
		return -1;
	if (d->max_sids > t->max_sids)
		d->max_sids = t->max_sids;	/* the network's limit holds */
	d->max_stretch = -1;
	if (get_stretch(o, where, &d->max_stretch, e) < 0 ||
	    get_int(o, "max_hops", where, 1, MPTE_MAX_HOPS, &d->max_hops, e) < 0)
		return -1;
	prot = get_string(o, "protection", where, 0, e);
	if (e->set)
		return -1;
	if (!prot || !strcmp(prot, "none"))
		d->protection = MPTE_PROTECT_NONE;
	else if (!strcmp(prot, "link"))
		d->protection = MPTE_PROTECT_LINK;
	else if (!strcmp(prot, "node"))
		d->protection = MPTE_PROTECT_NODE;
	else if (!strcmp(prot, "srlg"))
		d->protection = MPTE_PROTECT_SRLG;
	else {
		fail(e, "%s.protection: \"%s\" is not none, link, node or srlg",
		     where, prot);
		return -1;
	}
	d->existing = get_bool(o, "existing", where, 0, e);
	return e->set ? -1 : 0;
}

struct mpte_demand_set *mpte_demands_from_json(struct json_object *obj,
					       const struct mpte_topology *t,
					       char *err, size_t errlen)
{
	struct perr e = { err, errlen, 0 };
	struct mpte_demand_set *ds;
	struct json_object *arr = obj;
	size_t i, n;

	if (obj && json_object_get_type(obj) == json_type_object) {
		static const char *const keys[] = { "demands", NULL };

		if (!check_keys(obj, "demands", keys, &e))
			arr = get_array(obj, "demands", "", 1, &e);
	}
	else if (!obj || json_object_get_type(obj) != json_type_array)
		fail(&e, "demands: expected an object with a \"demands\" array");
	if (e.set)
		return NULL;

	n = json_object_array_length(arr);
	ds = mpte_xcalloc(1, sizeof(*ds));
	ds->d = mpte_xcalloc(n, sizeof(*ds->d));
	for (i = 0; i < n; i++) {
		ds->n++;
		if (parse_demand(t, json_object_array_get_idx(arr, i), i,
				 &ds->d[i], &e))
			goto bad;
	}
	/* ids name demands in results and incremental calls: unique */
	{
		struct named *v = mpte_xcalloc(n + 1, sizeof(*v));

		for (i = 0; i < n; i++) {
			v[i].key = ds->d[i].id;
			snprintf(v[i].field, sizeof(v[i].field), "demands[%zu].id", i);
		}
		check_unique(v, n, "id", &e);
		free(v);
	}
	if (e.set)
		goto bad;
	return ds;
bad:
	mpte_demands_free(ds);
	return NULL;
}

void mpte_demands_free(struct mpte_demand_set *ds)
{
	int i;

	if (!ds)
		return;
	for (i = 0; i < ds->n; i++) {
		free(ds->d[i].id);
		free(ds->d[i].ingress);
		free(ds->d[i].egress);
	}
	free(ds->d);
	free(ds);
}
