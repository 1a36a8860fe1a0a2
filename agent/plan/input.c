// SPDX-License-Identifier: GPL-2.0
/*
 * input.c - the model, sites and limits documents (Documentation/
 * planner.md) into structures.  The text was already read by the strict
 * reader of agent/lib/json_strict.h (no NaN, no duplicate keys); here
 * every object is checked for unknown keys, every number for its range,
 * and an error names the field as a path ("layers[3].param_bytes:
 * negative").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json_strict.h"
#include "plan_int.h"

int plan_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

void *plan_xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);

	if (!p)
		abort();
	return p;
}

char *plan_xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		abort();
	return p;
}

/* Every key of o must be one of keys (NULL-terminated). */
static int only_keys(struct json_object *o, const char *path,
		     const char *const *keys, char *err, size_t errlen)
{
	const char *k = json_strict_unknown_key(o, keys, NULL);

	if (k)
		return plan_fail(err, errlen, "%s%sunknown key \"%s\"",
				 path, *path ? ": " : "", k);
	return 0;
}

static int want_object(struct json_object *o, const char *path, char *err,
		       size_t errlen)
{
	if (!o || !json_object_is_type(o, json_type_object))
		return plan_fail(err, errlen, "%s: expected an object", path);
	return 0;
}

/*
 * A number at o.key in [min, max]: *out set, 0; absent: 1 when optional,
 * an error when required.
 */
static int get_num(struct json_object *o, const char *path, const char *key,
		   int required, double min, double max, double *out,
		   char *err, size_t errlen)
{
	struct json_object *v;
	const char *sep = *path ? "." : "";

	if (!json_object_object_get_ex(o, key, &v)) {
		if (required)
			return plan_fail(err, errlen, "%s%s%s: missing", path,
					 sep, key);
		return 1;
	}
	if (!json_object_is_type(v, json_type_double) &&
	    !json_object_is_type(v, json_type_int))
		return plan_fail(err, errlen, "%s%s%s: expected a number",
				 path, sep, key);
	*out = json_object_get_double(v);
	if (*out < 0 && min >= 0)
		return plan_fail(err, errlen, "%s%s%s: negative (%g)", path,
				 sep, key, *out);
	if (*out < min || *out > max)
		return plan_fail(err, errlen, "%s%s%s: %g is out of range %g..%g",
				 path, sep, key, *out, min, max);
	return 0;
}

static int get_int(struct json_object *o, const char *path, const char *key,
		   int required, int min, int max, int *out, char *err,
		   size_t errlen)
{
	double x;
	int r = get_num(o, path, key, required, min, max, &x, err, errlen);

	if (r)
		return r;
	if (x != (int)x)
		return plan_fail(err, errlen, "%s%s%s: expected an integer",
				 path, *path ? "." : "", key);
	*out = (int)x;
	return 0;
}

static int get_str(struct json_object *o, const char *path, const char *key,
		   int required, const char **out, char *err, size_t errlen)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v)) {
		if (required)
			return plan_fail(err, errlen, "%s.%s: missing", path, key);
		return 1;
	}
	if (!json_object_is_type(v, json_type_string) ||
	    !json_object_get_string_len(v))
		return plan_fail(err, errlen, "%s.%s: expected a non-empty string",
				 path, key);
	*out = json_object_get_string(v);
	return 0;
}

static const char *const layer_keys[] = {
	"name", "forward_gflop", "backward_gflop", "param_bytes",
	"activation_bytes", "memory_bytes", "inputs", NULL
};

static int parse_layer(struct json_object *o, const char *path,
		       struct plan_layer *l, int head, char *err, size_t errlen)
{
	struct json_object *in;
	const char *name;
	double x;
	size_t i;

	if (want_object(o, path, err, errlen) ||
	    only_keys(o, path, layer_keys, err, errlen) ||
	    get_str(o, path, "name", 1, &name, err, errlen))
		return -1;
	l->name = plan_xstrdup(name);
	l->path = plan_xstrdup(path);
	l->head = head;
	if (get_num(o, path, "forward_gflop", 1, 0, 1e15, &x, err, errlen))
		return -1;
	l->fwd = x * 1e9;
	if (get_num(o, path, "backward_gflop", 1, 0, 1e15, &x, err, errlen))
		return -1;
	l->bwd = x * 1e9;
	if (get_num(o, path, "activation_bytes", 1, 0, 1e18, &l->act, err,
		    errlen) ||
	    get_num(o, path, "param_bytes", 0, 0, 1e18, &l->param, err,
		    errlen) < 0 ||
	    get_num(o, path, "memory_bytes", 0, 0, 1e18, &l->mem, err,
		    errlen) < 0)
		return -1;
	l->nin = -1;	/* not given: the layer before it */
	if (!json_object_object_get_ex(o, "inputs", &in))
		return 0;
	if (!json_object_is_type(in, json_type_array))
		return plan_fail(err, errlen, "%s.inputs: expected an array of layer names",
				 path);
	l->nin = json_object_array_length(in);
	l->in_names = plan_xcalloc(l->nin, sizeof(char *));
	for (i = 0; i < (size_t)l->nin; i++) {
		struct json_object *v = json_object_array_get_idx(in, i);

		if (!json_object_is_type(v, json_type_string))
			return plan_fail(err, errlen, "%s.inputs[%zu]: expected a layer name",
					 path, i);
		l->in_names[i] = plan_xstrdup(json_object_get_string(v));
	}
	return 0;
}

static int parse_layers(struct plan_model *m, struct json_object *arr,
			const char *path, int head, const char *attach,
			char *err, size_t errlen)
{
	size_t i, n;
	char p[128];

	if (!json_object_is_type(arr, json_type_array) ||
	    !(n = json_object_array_length(arr)))
		return plan_fail(err, errlen, "%s: expected a non-empty array of layers",
				 path);
	m->l = realloc(m->l, (m->n + n) * sizeof(*m->l));
	if (!m->l)
		abort();
	memset(m->l + m->n, 0, n * sizeof(*m->l));
	for (i = 0; i < n; i++) {
		struct plan_layer *l = &m->l[m->n];

		snprintf(p, sizeof(p), "%s[%zu]", path, i);
		m->n++;
		if (parse_layer(json_object_array_get_idx(arr, i), p, l, head,
				err, errlen))
			return -1;
		/* a head's first layer hangs on its attach point */
		if (i == 0 && l->nin < 0 && attach) {
			l->nin = 1;
			l->in_names = plan_xcalloc(1, sizeof(char *));
			l->in_names[0] = plan_xstrdup(attach);
		}
	}
	return 0;
}

static const char *const model_keys[] = { "name", "layers", "heads", NULL };
static const char *const head_keys[] = { "name", "attach", "layers", NULL };

struct plan_model *plan_model_from_json(struct json_object *o, char *err,
					size_t errlen)
{
	struct plan_model *m = plan_xcalloc(1, sizeof(*m));
	struct json_object *v, *heads;
	const char *s;
	size_t h;
	char p[64];

	if (want_object(o, "model", err, errlen) ||
	    only_keys(o, "", model_keys, err, errlen))
		goto bad;
	if (get_str(o, "model", "name", 0, &s, err, errlen) < 0)
		goto bad;
	m->name = plan_xstrdup(json_object_object_get_ex(o, "name", &v) ? s :
			       "model");
	if (!json_object_object_get_ex(o, "layers", &v)) {
		plan_fail(err, errlen, "layers: missing");
		goto bad;
	}
	if (parse_layers(m, v, "layers", -1, NULL, err, errlen))
		goto bad;
	if (!json_object_object_get_ex(o, "heads", &heads))
		return m;
	if (!json_object_is_type(heads, json_type_array)) {
		plan_fail(err, errlen, "heads: expected an array");
		goto bad;
	}
	m->nheads = json_object_array_length(heads);
	m->head_names = plan_xcalloc(m->nheads, sizeof(char *));
	for (h = 0; h < (size_t)m->nheads; h++) {
		struct json_object *ho = json_object_array_get_idx(heads, h);
		const char *attach = m->l[m->n - 1].name;
		int backbone_end = m->n;

		snprintf(p, sizeof(p), "heads[%zu]", h);
		if (want_object(ho, p, err, errlen) ||
		    only_keys(ho, p, head_keys, err, errlen) ||
		    get_str(ho, p, "name", 1, &s, err, errlen))
			goto bad;
		m->head_names[h] = plan_xstrdup(s);
		if (get_str(ho, p, "attach", 0, &attach, err, errlen) < 0)
			goto bad;
		/* heads share the backbone: attach to its last layer by default */
		if (!json_object_object_get_ex(ho, "attach", &v) && h)
			attach = m->l[backbone_end - 1].name;
		if (!json_object_object_get_ex(ho, "layers", &v)) {
			plan_fail(err, errlen, "%s.layers: missing", p);
			goto bad;
		}
		snprintf(p, sizeof(p), "heads[%zu].layers", h);
		if (parse_layers(m, v, p, h, attach, err, errlen))
			goto bad;
	}
	return m;
bad:
	plan_model_free(m);
	return NULL;
}

void plan_model_free(struct plan_model *m)
{
	int i, j;

	if (!m)
		return;
	for (i = 0; i < m->n; i++) {
		free(m->l[i].name);
		free(m->l[i].path);
		for (j = 0; j < m->l[i].nin && m->l[i].in_names; j++)
			free(m->l[i].in_names[j]);
		free(m->l[i].in_names);
		free(m->l[i].in);
	}
	for (i = 0; i < m->nheads; i++)
		free(m->head_names[i]);
	free(m->head_names);
	free(m->l);
	free(m->name);
	free(m);
}

static const char *const sites_keys[] = {
	"sites", "wan_gbps", "wan_latency_ms", NULL
};
static const char *const site_keys[] = {
	"name", "gpus", "tflops", "gpu_memory_bytes", "intra_gbps", NULL
};

/* An n x n matrix of numbers >= 0 at o.key into m (scaled). */
static int parse_matrix(struct json_object *o, const char *key, int n,
			double scale, double m[PLAN_MAX_SITES][PLAN_MAX_SITES],
			char *err, size_t errlen)
{
	struct json_object *a;
	int i, j;

	if (!json_object_object_get_ex(o, key, &a))
		return 1;
	if (!json_object_is_type(a, json_type_array) ||
	    (int)json_object_array_length(a) != n)
		return plan_fail(err, errlen, "%s: expected %d rows, one per site",
				 key, n);
	for (i = 0; i < n; i++) {
		struct json_object *row = json_object_array_get_idx(a, i);

		if (!json_object_is_type(row, json_type_array) ||
		    (int)json_object_array_length(row) != n)
			return plan_fail(err, errlen, "%s[%d]: expected %d numbers",
					 key, i, n);
		for (j = 0; j < n; j++) {
			struct json_object *v = json_object_array_get_idx(row, j);
			double x;

			if (!json_object_is_type(v, json_type_double) &&
			    !json_object_is_type(v, json_type_int))
				return plan_fail(err, errlen, "%s[%d][%d]: expected a number",
						 key, i, j);
			x = json_object_get_double(v);
			if (x < 0)
				return plan_fail(err, errlen, "%s[%d][%d]: negative (%g)",
						 key, i, j, x);
			m[i][j] = i == j ? 0 : x * scale;
		}
	}
	return 0;
}

struct plan_sites *plan_sites_from_json(struct json_object *o, char *err,
					size_t errlen)
{
	struct plan_sites *s = plan_xcalloc(1, sizeof(*s));
	struct json_object *a;
	char p[64];
	int i, j;

	if (want_object(o, "sites", err, errlen) ||
	    only_keys(o, "", sites_keys, err, errlen))
		goto bad;
	if (!json_object_object_get_ex(o, "sites", &a) ||
	    !json_object_is_type(a, json_type_array) ||
	    !json_object_array_length(a)) {
		plan_fail(err, errlen, "sites: expected a non-empty array");
		goto bad;
	}
	if (json_object_array_length(a) > PLAN_MAX_SITES) {
		plan_fail(err, errlen, "sites: more than %d", PLAN_MAX_SITES);
		goto bad;
	}
	s->n = json_object_array_length(a);
	for (i = 0; i < s->n; i++) {
		struct json_object *so = json_object_array_get_idx(a, i);
		struct plan_site *t = &s->s[i];
		const char *name;
		double x;

		snprintf(p, sizeof(p), "sites[%d]", i);
		if (want_object(so, p, err, errlen) ||
		    only_keys(so, p, site_keys, err, errlen) ||
		    get_str(so, p, "name", 1, &name, err, errlen))
			goto bad;
		for (j = 0; j < i; j++)
			if (!strcmp(s->s[j].name, name)) {
				plan_fail(err, errlen, "%s.name: \"%s\" repeats sites[%d]",
					  p, name, j);
				goto bad;
			}
		t->name = plan_xstrdup(name);
		if (get_int(so, p, "gpus", 1, 1, 1 << 20, &t->gpus, err, errlen))
			goto bad;
		if (get_num(so, p, "tflops", 1, 1e-9, 1e9, &x, err, errlen))
			goto bad;
		t->flops = x * 1e12;
		if (get_num(so, p, "gpu_memory_bytes", 1, 1, 1e18, &t->mem, err,
			    errlen))
			goto bad;
		if (get_num(so, p, "intra_gbps", 1, 1e-9, 1e9, &x, err, errlen))
			goto bad;
		t->intra_bw = x * 1e9 / 8;
	}
	if (parse_matrix(o, "wan_gbps", s->n, 1e9 / 8, s->bw, err, errlen) < 0 ||
	    parse_matrix(o, "wan_latency_ms", s->n, 1e-3, s->lat, err,
			 errlen) < 0)
		goto bad;
	if (s->n > 1 && !json_object_object_get_ex(o, "wan_gbps", &a)) {
		plan_fail(err, errlen, "wan_gbps: missing (%d sites)", s->n);
		goto bad;
	}
	return s;
bad:
	plan_sites_free(s);
	return NULL;
}

void plan_sites_free(struct plan_sites *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		free(s->s[i].name);
	free(s);
}

void plan_limits_default(struct plan_limits *l)
{
	memset(l, 0, sizeof(*l));
	l->stages = 8;
	l->micro_batches = 16;
	l->method = PLAN_AUTO;
	l->tabu.tenure = 12;
	l->tabu.iterations = 3000;
	l->tabu.stall = 600;
	l->tabu.moves = PLAN_MOVE_ALL;
	l->tabu.seed = 1;
}

void plan_limits_clear(struct plan_limits *l)
{
	int i;

	for (i = 0; i < l->npins; i++) {
		free(l->pins[i].layer);
		free(l->pins[i].site);
	}
	free(l->pins);
	l->pins = NULL;
	l->npins = 0;
}

int plan_limits_add_pin(struct plan_limits *l, const char *layer,
			const char *site)
{
	int i;

	for (i = 0; i < l->npins; i++)
		if (!strcmp(l->pins[i].layer, layer))
			return -1;
	l->pins = realloc(l->pins, (l->npins + 1) * sizeof(*l->pins));
	if (!l->pins)
		abort();
	l->pins[l->npins].layer = plan_xstrdup(layer);
	l->pins[l->npins].site = plan_xstrdup(site);
	l->npins++;
	return 0;
}

static const char *const move_names[] = { "shift", "merge", "split", "site" };

int plan_moves_parse(const char *s, unsigned int *moves)
{
	char *copy = plan_xstrdup(s), *w, *save = NULL;
	unsigned int m = 0;
	size_t i;
	int rc = 0;

	for (w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (!strcmp(w, "all")) {
			m |= PLAN_MOVE_ALL;
			continue;
		}
		for (i = 0; i < sizeof(move_names) / sizeof(*move_names); i++)
			if (!strcmp(w, move_names[i]))
				break;
		if (i == sizeof(move_names) / sizeof(*move_names)) {
			rc = -1;
			break;
		}
		m |= 1u << i;
	}
	free(copy);
	if (rc || !m)
		return -1;
	*moves = m;
	return 0;
}

static const char *const limits_keys[] = {
	"stages", "gpus_per_stage", "max_layers_per_stage", "micro_batches",
	"pinned", "method", "tabu", NULL
};
static const char *const tabu_keys[] = {
	"tenure", "iterations", "stall", "moves", "seed", NULL
};

static int parse_method(const char *s, enum plan_method *m)
{
	static const char *const names[] = { "auto", "dp", "tabu", "uniform" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (!strcmp(s, names[i])) {
			*m = (enum plan_method)i;
			return 0;
		}
	return -1;
}

int plan_method_parse(const char *s, enum plan_method *m)
{
	return parse_method(s, m);
}

int plan_limits_from_json(struct json_object *o, struct plan_limits *l,
			  char *err, size_t errlen)
{
	struct json_object *v, *t;
	const char *s;
	int x, seed;

	if (want_object(o, "limits", err, errlen) ||
	    only_keys(o, "", limits_keys, err, errlen) ||
	    get_int(o, "", "stages", 0, 1, PLAN_MAX_STAGES, &l->stages, err,
		    errlen) < 0 ||
	    get_int(o, "", "gpus_per_stage", 0, 1, 1 << 20, &l->gpus_per_stage,
		    err, errlen) < 0 ||
	    get_int(o, "", "max_layers_per_stage", 0, 1, 1 << 30,
		    &l->max_layers_per_stage, err, errlen) < 0 ||
	    get_int(o, "", "micro_batches", 0, 1, 1 << 20, &l->micro_batches,
		    err, errlen) < 0)
		return -1;
	if (get_str(o, "limits", "method", 0, &s, err, errlen) < 0)
		return -1;
	if (json_object_object_get_ex(o, "method", &v) &&
	    parse_method(s, &l->method))
		return plan_fail(err, errlen, "method: \"%s\" is not auto, dp, tabu or uniform",
				 s);
	if (json_object_object_get_ex(o, "pinned", &v)) {
		if (want_object(v, "pinned", err, errlen))
			return -1;
		json_object_object_foreach(v, layer, site) {
			if (!json_object_is_type(site, json_type_string))
				return plan_fail(err, errlen, "pinned.%s: expected a site name",
						 layer);
			if (plan_limits_add_pin(l, layer, json_object_get_string(site)))
				return plan_fail(err, errlen, "pinned.%s: pinned twice",
						 layer);
		}
	}
	if (!json_object_object_get_ex(o, "tabu", &t))
		return 0;
	if (want_object(t, "tabu", err, errlen) ||
	    only_keys(t, "tabu", tabu_keys, err, errlen) ||
	    get_int(t, "tabu", "tenure", 0, 0, 1 << 20, &l->tabu.tenure, err,
		    errlen) < 0 ||
	    get_int(t, "tabu", "iterations", 0, 0, 1 << 24,
		    &l->tabu.iterations, err, errlen) < 0 ||
	    get_int(t, "tabu", "stall", 0, 1, 1 << 24, &l->tabu.stall, err,
		    errlen) < 0)
		return -1;
	x = get_int(t, "tabu", "seed", 0, 0, 1 << 30, &seed, err, errlen);
	if (x < 0)
		return -1;
	if (x == 0)
		l->tabu.seed = seed;
	if (json_object_object_get_ex(t, "moves", &v)) {
		unsigned int m = 0;
		size_t i;

		if (!json_object_is_type(v, json_type_array) ||
		    !json_object_array_length(v))
			return plan_fail(err, errlen, "tabu.moves: expected an array of move names");
		for (i = 0; i < json_object_array_length(v); i++) {
			struct json_object *w = json_object_array_get_idx(v, i);
			unsigned int one;

			if (!json_object_is_type(w, json_type_string) ||
			    plan_moves_parse(json_object_get_string(w), &one))
				return plan_fail(err, errlen, "tabu.moves[%zu]: not one of shift, merge, split, site, all",
						 i);
			m |= one;
		}
		l->tabu.moves = m;
	}
	return 0;
}
