// SPDX-License-Identifier: GPL-2.0
/*
 * batch.c - "dmsc mpte batch": a solver result (dmsc -j mpte solve) as
 * dmsc -batch lines, one "tunnel add" per admitted demand:
 *
 *	tunnel add ID src ADDR path SID,... weight W [path ...] [backup SID,...]
 *
 * demands[i] becomes tunnel BASE + i, so a demand keeps its tunnel id from
 * one solve to the next as long as the demands file keeps its order.  The
 * result is read as untrusted input: everything the kernel would refuse
 * (a SID that is not an IPv6 address, more than DMSC_MAX_SEGS SIDs or
 * DMSC_MAX_PATHS lists, a weight outside 1..DMSC_MAX_WEIGHT, two equal
 * lists) and every demand the solver marked not installable is an error
 * naming the field, and then nothing is printed: a batch that installs
 * some demands and silently not others is worse than none.
 *
 * A tunnel lives on one head-end.  A demand with several ingresses may
 * have paths leaving from each; --ingress NODE keeps those leaving from
 * NODE (their weights re-derived from their bandwidths), and without it
 * such a demand is an error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <linux/dmsc.h>

#include "mpte_cli.h"
#include "mpte_int.h"
#include "json_strict.h"

#define EXIT_USAGE 2	/* as dmsc's own usage errors */

struct batch {
	const char *result, *src, *ingress;
	unsigned long long base;
	char err[512];
	FILE *out;
	char *buf;
	size_t len;
};

/* One list as it will be written. */
struct blist {
	char sids[DMSC_MAX_SEGS][INET6_ADDRSTRLEN];
	int n;
	long long weight;
	double bandwidth;
	const char *head;	/* hops[0] */
};

static int berr(struct batch *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int berr(struct batch *b, const char *fmt, ...)
{
	va_list ap;

	if (b->err[0])
		return -1;
	va_start(ap, fmt);
	vsnprintf(b->err, sizeof(b->err), fmt, ap);
	va_end(ap);
	return -1;
}

static struct json_object *member(struct json_object *o, const char *key,
				  enum json_type type)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !v ||
	    json_object_get_type(v) != type)
		return NULL;
	return v;
}

/* "segments" (and "hops") of a path or the backup, at where, into l. */
static int read_list(struct batch *b, struct json_object *o,
		     const char *where, struct blist *l)
{
	struct json_object *segs = member(o, "segments", json_type_array);
	struct json_object *hops = member(o, "hops", json_type_array);
	struct json_object *h0;
	size_t i, n;

	if (!segs)
		return berr(b, "%s.segments: expected an array of SIDs", where);
	n = json_object_array_length(segs);
	if (n < 1 || n > DMSC_MAX_SEGS)
		return berr(b, "%s.segments: %zu SIDs, the data plane takes 1..%d",
			    where, n, DMSC_MAX_SEGS);
	for (i = 0; i < n; i++) {
		struct json_object *v = json_object_array_get_idx(segs, i);
		struct in6_addr a;

		if (!v || json_object_get_type(v) != json_type_string)
			return berr(b, "%s.segments[%zu]: expected a SID, got %s",
				    where, i, v ? json_type_to_name(
					    json_object_get_type(v)) : "null");
		if (inet_pton(AF_INET6, json_object_get_string(v), &a) != 1)
			return berr(b, "%s.segments[%zu]: \"%s\" is not an IPv6 address",
				    where, i, json_object_get_string(v));
		inet_ntop(AF_INET6, &a, l->sids[i], sizeof(l->sids[i]));
	}
	l->n = (int)n;
	h0 = hops ? json_object_array_get_idx(hops, 0) : NULL;
	if (!h0 || json_object_get_type(h0) != json_type_string)
		return berr(b, "%s.hops: expected the path's nodes, ingress first",
			    where);
	l->head = json_object_get_string(h0);
	return 0;
}

static int same_sids(const struct blist *x, const struct blist *y)
{
	int i;

	if (x->n != y->n)
		return 0;
	for (i = 0; i < x->n; i++)
		if (strcmp(x->sids[i], y->sids[i]))
			return 0;
	return 1;
}

static void put_sids(FILE *f, const struct blist *l)
{
	int i;

	for (i = 0; i < l->n; i++)
		fprintf(f, "%s%s", i ? "," : "", l->sids[i]);
}

/* One demand: a tunnel, a comment, or an error. */
static int one_demand(struct batch *b, struct json_object *d, size_t di)
{
	struct json_object *id = member(d, "id", json_type_string);
	struct json_object *st = member(d, "status", json_type_string);
	struct json_object *paths, *inst, *bk, *why;
	struct blist l[DMSC_MAX_PATHS], bl;
	char where[64], pw[96];
	const char *head = NULL, *dropped = NULL;
	size_t i, n;
	int nl = 0, have_backup = 0, k;
	double total = 0;

	snprintf(where, sizeof(where), "demands[%zu]", di);
	if (!id || !st)
		return berr(b, "%s: expected \"id\" and \"status\" strings (is this a dmsc -j mpte solve result?)",
			    where);
	if (strcmp(json_object_get_string(st), "admitted")) {
		why = member(d, "reason", json_type_string);
		fprintf(b->out, "# %s \"%s\": %s%s%s: no tunnel\n", where,
			json_object_get_string(id), json_object_get_string(st),
			why ? ": " : "", why ? json_object_get_string(why) : "");
		return 0;
	}
	inst = member(d, "installable", json_type_boolean);
	if (!inst)
		return berr(b, "%s \"%s\": no \"installable\" (a result from an older solver?)",
			    where, json_object_get_string(id));
	if (!json_object_get_boolean(inst)) {
		why = member(d, "install_error", json_type_string);
		return berr(b, "%s \"%s\": not installable: %s", where,
			    json_object_get_string(id),
			    why ? json_object_get_string(why) : "(no reason given)");
	}
	paths = member(d, "paths", json_type_array);
	if (!paths || !(n = json_object_array_length(paths)))
		return berr(b, "%s.paths: expected a non-empty array", where);
	for (i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(paths, i), *w;
		struct blist x;

		snprintf(pw, sizeof(pw), "%s.paths[%zu]", where, i);
		if (!p || json_object_get_type(p) != json_type_object)
			return berr(b, "%s: expected an object", pw);
		if (read_list(b, p, pw, &x))
			return -1;
		if (b->ingress && strcmp(x.head, b->ingress))
			continue;	/* another head-end's */
		if (!b->ingress && head && strcmp(x.head, head))
			return berr(b, "%s: leaves from %s, an earlier path from %s: one tunnel has one head-end (give --ingress)",
				    pw, x.head, head);
		head = x.head;
		w = member(p, "weight", json_type_int);
		if (!w)
			return berr(b, "%s.weight: expected an integer", pw);
		x.weight = json_object_get_int64(w);
		if (x.weight < 1 || x.weight > DMSC_MAX_WEIGHT)
			return berr(b, "%s.weight: %lld is outside 1..%d", pw,
				    x.weight, DMSC_MAX_WEIGHT);
		w = member(p, "bandwidth", json_type_double);
		if (!w)
			w = member(p, "bandwidth", json_type_int);
		x.bandwidth = w ? json_object_get_double(w) : 0;
		if (!w || !(x.bandwidth > 0) || !isfinite(x.bandwidth))
			return berr(b, "%s.bandwidth: expected a positive number", pw);
		for (k = 0; k < nl; k++)
			if (same_sids(&l[k], &x))
				return berr(b, "%s.segments: the same list as paths[%d] (the data plane would not tell them apart)",
					    pw, k);
		if (nl == DMSC_MAX_PATHS)
			return berr(b, "%s.paths: more than %d lists, what a dmsc tunnel holds",
				    where, DMSC_MAX_PATHS);
		total += x.bandwidth;
		l[nl++] = x;
	}
	if (!nl) {
		fprintf(b->out, "# %s \"%s\": no path leaves from %s: no tunnel here\n",
			where, json_object_get_string(id), b->ingress);
		return 0;
	}
	/* paths from other head-ends left out: shares among those kept */
	if ((size_t)nl < n)
		for (k = 0; k < nl; k++) {
			l[k].weight = (long long)(l[k].bandwidth / total * 10000 + 0.5);
			if (l[k].weight < 1)
				l[k].weight = 1;
		}
	bk = member(d, "backup", json_type_object);
	if (bk) {
		snprintf(pw, sizeof(pw), "%s.backup", where);
		if (read_list(b, bk, pw, &bl))
			return -1;
		if (strcmp(bl.head, head))
			dropped = bl.head;
		else
			have_backup = 1;
	}
	if (b->base + di > UINT32_MAX)
		return berr(b, "%s: tunnel id %llu is above %u", where,
			    b->base + di, UINT32_MAX);
	fprintf(b->out, "# %s \"%s\": %d list%s from %s%s\n", where,
		json_object_get_string(id), nl, nl == 1 ? "" : "s", head,
		have_backup ? ", backup" : dropped ? ", backup leaves from another node: left out" : "");
	fprintf(b->out, "tunnel add %llu src %s", b->base + di, b->src);
	for (k = 0; k < nl; k++) {
		fputs(" path ", b->out);
		put_sids(b->out, &l[k]);
		fprintf(b->out, " weight %lld", l[k].weight);
	}
	if (have_backup) {
		fputs(" backup ", b->out);
		put_sids(b->out, &bl);
	}
	fputc('\n', b->out);
	return 0;
}

static int convert(struct batch *b, struct json_object *r)
{
	struct json_object *dem = member(r, "demands", json_type_array);
	size_t i, n;

	if (!dem)
		return berr(b, "demands: missing (is this a dmsc -j mpte solve result?)");
	n = json_object_array_length(dem);
	fprintf(b->out, "# dmsc mpte batch: %s, src %s, tunnel %llu + demand index%s%s\n",
		b->result, b->src, b->base, b->ingress ? ", ingress " : "",
		b->ingress ? b->ingress : "");
	for (i = 0; i < n; i++) {
		struct json_object *d = json_object_array_get_idx(dem, i);

		if (!d || json_object_get_type(d) != json_type_object)
			return berr(b, "demands[%zu]: expected an object", i);
		if (one_demand(b, d, i))
			return -1;
	}
	return 0;
}

int mpte_batch(int argc, char **argv)
{
	struct batch b = { 0 };
	struct json_object *r;
	struct in6_addr a;
	char src[INET6_ADDRSTRLEN];
	int i, have_base = 0, rc;

	for (i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v) {
			fprintf(stderr, "mpte: batch: %s: needs an argument\n", o);
			return EXIT_USAGE;
		}
		i++;
		if (!strcmp(o, "--result")) {
			b.result = v;
		} else if (!strcmp(o, "--src")) {
			if (inet_pton(AF_INET6, v, &a) != 1) {
				fprintf(stderr, "mpte: batch: --src: \"%s\" is not an IPv6 address\n", v);
				return EXIT_USAGE;
			}
			b.src = inet_ntop(AF_INET6, &a, src, sizeof(src));
		} else if (!strcmp(o, "--tunnel-id")) {
			char *end;

			errno = 0;
			b.base = strtoull(v, &end, 10);
			if (errno || end == v || *end || *v == '-' ||
			    b.base < 1 || b.base > UINT32_MAX) {
				fprintf(stderr, "mpte: batch: --tunnel-id: expected 1..%u, got \"%s\"\n",
					UINT32_MAX, v);
				return EXIT_USAGE;
			}
			have_base = 1;
		} else if (!strcmp(o, "--ingress")) {
			b.ingress = v;
		} else {
			fprintf(stderr, "mpte: batch: unknown option \"%s\"\n", o);
			return EXIT_USAGE;
		}
	}
	if (!b.result || !b.src || !have_base) {
		fprintf(stderr, "mpte: batch needs --result, --src and --tunnel-id\n");
		return EXIT_USAGE;
	}
	r = json_strict_load(b.result, b.err, sizeof(b.err));
	if (!r) {
		fprintf(stderr, "mpte: batch: %s\n", b.err);
		return 1;
	}
	/* all or nothing: the lines wait until every demand checked out */
	b.out = open_memstream(&b.buf, &b.len);
	if (!b.out) {
		json_object_put(r);
		fprintf(stderr, "mpte: batch: %s\n", strerror(errno));
		return 1;
	}
	rc = convert(&b, r);
	fclose(b.out);
	json_object_put(r);
	if (rc) {
		fprintf(stderr, "mpte: batch: %s: %s\n", b.result, b.err);
		free(b.buf);
		return 1;
	}
	fwrite(b.buf, 1, b.len, stdout);
	free(b.buf);
	return fflush(stdout) ? 1 : 0;
}
