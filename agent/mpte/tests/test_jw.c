// SPDX-License-Identifier: GPL-2.0
/*
 * test_jw.c - the result writer prints what json-c printed before it:
 * numbers and strings against json-c itself, and the whole document of
 * two fig1 runs (with events, backups, a rejected and a preempted demand)
 * against files written by the json-c writer it replaced.
 */
#include <stdlib.h>
#include <string.h>

#include "mpte_int.h"
#include "jw.h"
#include "json_strict.h"
#include "ktap.h"
#include "instance.h"

static unsigned long long rng = 88172645463325252ULL;

static unsigned long long rnd64(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* v as json-c prints it, the reference */
static const char *jsonc(double v)
{
	static char buf[64];
	struct json_object *o = json_object_new_double(v);

	snprintf(buf, sizeof(buf), "%s", json_object_to_json_string_ext(o,
		 JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return buf;
}

static int same_double(double v)
{
	char b[JW_DBL_LEN];
	const char *ref = jsonc(v);

	jw_format_double(b, v);
	if (strcmp(b, ref))
		return ktap_fail("%.17g: jw \"%s\", json-c \"%s\"", v, b, ref);
	return 0;
}

#define N_NUMBERS 300000

/* the shapes the solver prints: volumes with three decimals, ratios,
 * integers, any bits, and exact ties at the 17th digit (x.125 above
 * 10^14 has 18 digits ending in 5: printf rounds those to even) */
static int t_numbers(void)
{
	static const double edge[] = {
		0, -0.0, 1, -1, 0.1, 0.5, 1e-4, 9.99999999999999e-5, 1e-5,
		1e15, 999999999999999.9, 1e16, 1e17, 1e300, 5e-324,
		0.99999999999999999, 9.9999999999999995, 400, 2.0573837500198278,
		123456789012345.125, 123456789012345.375,
	};
	int i;

	for (i = 0; i < (int)(sizeof(edge) / sizeof(edge[0])); i++)
		if (same_double(edge[i]) || same_double(-edge[i]))
			return 1;
	for (i = 0; i < N_NUMBERS; i++) {
		unsigned long long r = rnd64();
		double bits, v;

		memcpy(&bits, &r, sizeof(bits));
		switch (i % 5) {
		case 0:
			v = (double)(r % 10000000) / 1000;
			break;
		case 1:
			v = (double)(r % 1000003) / (double)(r % 997 + 1);
			break;
		case 2:
			v = (double)(r % 100000);
			break;
		case 3:
			v = bits;
			break;
		default:
			v = 1e14 + (double)(r % 800000000000000ULL) +
			    (double)(2 * (r % 4) + 1) / 8;
		}
		if (same_double(v))
			return 1;
	}
	return 0;
}

static int t_strings(void)
{
	static const char *const s[] = {
		"plain", "a/b", "quote\"back\\slash", "tab\tnl\ncr\rbs\bff\f",
		"\x01\x1f\x7f", "caf\xc3\xa9", "",
	};
	int i, bad = 0;

	for (i = 0; i < (int)(sizeof(s) / sizeof(s[0])) && !bad; i++) {
		struct json_object *o = json_object_new_string(s[i]);
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		struct jw w;

		jw_init(&w, f);
		jw_str(&w, s[i]);
		fclose(f);
		if (strcmp(buf, json_object_to_json_string_ext(o,
			   JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)))
			bad = ktap_fail("string %d: jw %s, json-c %s", i, buf,
					json_object_to_json_string_ext(o,
					JSON_C_TO_STRING_PLAIN |
					JSON_C_TO_STRING_NOSLASHESCAPE));
		free(buf);
		json_object_put(o);
	}
	return bad;
}

/* solve_seconds is the only value that differs between runs */
static void mask_seconds(char *doc)
{
	char *p = strstr(doc, "\"solve_seconds\":"), *e;

	if (!p)
		return;
	p += strlen("\"solve_seconds\":");
	e = strchr(p, '}');
	if (e)
		memmove(p, e, strlen(e) + 1);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = mpte_xcalloc(n + 1, 1);
	if (fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/*
 * fig1 solved as "mpte-solve solve ... -j" solves it, then the events;
 * the result must equal golden byte for byte.
 */
static int golden(int admission, int resize, const char *golden)
{
	const char *dir = test_data_dir();
	char path[512], err[256], *buf = NULL, *want = NULL;
	struct json_object *r = NULL;
	struct test_instance in;
	struct mpte_ctx *ctx = NULL;
	struct mpte_options o;
	size_t len = 0, k;
	FILE *f;

	CHECK(!test_instance_load(&in, "fig1", err, sizeof(err)), "%s", err);
	mpte_options_default(&o);
	o.admission = admission;
	ctx = mpte_new(in.t, in.ds, &o);
	mpte_solve(ctx);
	CHECK(!mpte_fail_link(ctx, "L1-S1", err, sizeof(err)), "%s", err);
	CHECK(!resize || !mpte_set_bandwidth(ctx, "t1", 150, err, sizeof(err)),
	      "%s", err);
	f = open_memstream(&buf, &len);
	CHECK(f, "open_memstream");
	mpte_result_print(ctx, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s", dir, golden);
	want = slurp(path);
	CHECK(want, "cannot read %s", path);
	mask_seconds(buf);
	mask_seconds(want);
	for (k = 0; buf[k] && buf[k] == want[k]; k++)
		;
	CHECK(!buf[k] && !want[k], "%s: differs at byte %zu: ours \"%.40s\", golden \"%.40s\"",
	      golden, k, buf + k, want + k);
	/* the json-c tree is the same document */
	r = mpte_result_json(ctx);
	CHECK(r && json_object_get_int(json_object_object_get(
		json_object_object_get(r, "summary"), "demands")) == 5,
	      "mpte_result_json: no summary.demands = 5");
out:
	if (r)
		json_object_put(r);
	free(buf);
	free(want);
	mpte_free(ctx);
	test_instance_free(&in);
	return KTAP_FAILED();
}

int main(void)
{
	ktap_plan(4);
	ktap_result(t_numbers(), "numbers_as_json_c_prints_them");
	ktap_result(t_strings(), "strings_as_json_c_escapes_them");
	ktap_result(golden(1, 1, "fig1-result-events.json"),
		    "fig1_failure_and_resize_result_unchanged");
	ktap_result(golden(0, 0, "fig1-result-noadm.json"),
		    "fig1_no_admission_failure_result_unchanged");
	return ktap_failed ? 1 : 0;
}
