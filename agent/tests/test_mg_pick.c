// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the gateway's choice (daemon/mg/mg_pick.c): smooth
 * weighted round robin gives nginx's sequence, exact counts over any run
 * as long as the total weight, a tie to the first id, and a replaced set
 * keeps its counts; the prefix reader.
 */
#include <stdlib.h>
#include <string.h>

#include "mg_pick.h"
#include "tests/ktap.h"

static struct wrr_member *members(const char *ids, const uint32_t *cap, size_t n)
{
	struct wrr_member *m = calloc(n, sizeof(*m));

	for (size_t i = 0; i < n; i++) {
		snprintf(m[i].inst.id, sizeof(m[i].inst.id), "%c", ids[i]);
		m[i].inst.capability = cap[i];
		m[i].weight = wrr_weight(cap[i]);
	}
	return m;
}

static void seq(struct wrr_set *s, int n, char *out)
{
	for (int i = 0; i < n; i++) {
		ssize_t k = wrr_pick(s);

		out[i] = k < 0 ? '-' : s->m[k].inst.id[0];
	}
	out[n] = '\0';
}

int main(void)
{
	static const uint32_t w511[] = { 1, 5, 1 }, w0[] = { 0, 0, 0 },
		w37[] = { 3, 7 }, w2[] = { 2, 2, 1, 4 };
	struct wrr_set s = { 0 };
	char out[256];
	int ok;

	ktap_plan(8);

	/* given b a c (weights 1 5 1): sorted by id, a b c, a first on a tie */
	wrr_set_replace(&s, members("bac", w511, 3), 3);
	seq(&s, 14, out);
	ktap_check(!strcmp(out, "aabacaaaabacaa"), "5:1:1 picks a a b a c a a, nginx's sequence, twice");

	ok = 1;
	wrr_set_replace(&s, members("abcd", w2, 4), 4);
	for (int start = 0; start < 9 && ok; start++) {
		int k[4] = { 0 };

		/* a run of 9 (the total) from any phase: 2, 2, 1, 4 */
		for (int i = 0; i < 9; i++)
			k[wrr_pick(&s)]++;
		ok = k[0] == 2 && k[1] == 2 && k[2] == 1 && k[3] == 4;
		wrr_pick(&s);	/* the next run starts one later */
	}
	ktap_check(ok, "every run of the total weight's length holds each member by its weight");

	wrr_set_replace(&s, members("xyz", w0, 3), 3);
	seq(&s, 6, out);
	ktap_check(!strcmp(out, "xyzxyz"), "capability 0 counts as 1: plain round robin by id");

	wrr_set_replace(&s, members("pq", w37, 2), 2);
	seq(&s, 10, out);
	ok = s.m[0].chosen == 3 && s.m[1].chosen == 7;
	/* q leaves, r comes: p keeps its count, r starts at 0, the round restarts */
	{
		static const uint32_t w[] = { 3, 1 };

		wrr_set_replace(&s, members("pr", w, 2), 2);
	}
	ok = ok && s.n == 2 && s.m[0].chosen == 3 && s.m[1].chosen == 0 &&
	     s.m[0].cw == 0 && s.m[1].cw == 0;
	seq(&s, 4, out);
	ok = ok && !strcmp(out, "pprp") && s.m[0].chosen == 6 && s.m[1].chosen == 1;
	ktap_check(ok, "a replaced set keeps the counts of the members it keeps, restarts the round");

	/*
	 * The same members and weights again between every pick (the table
	 * changed for another service): the round goes on, 1:1:1 stays
	 * a b c, not a a a.
	 */
	{
		static const uint32_t w[] = { 1, 1, 1 };

		wrr_set_replace(&s, members("abc", w, 3), 3);
		for (int i = 0; i < 30; i++) {
			ssize_t k = wrr_pick(&s);

			out[i] = k < 0 ? '-' : s.m[k].inst.id[0];
			wrr_set_replace(&s, members("abc", w, 3), 3);
		}
		out[30] = '\0';
		ok = !strcmp(out, "abcabcabcabcabcabcabcabcabcabc");
		if (!ok)
			printf("# picks: %s\n", out);
		ktap_check(ok, "the same set again between picks keeps the round: a b c, not a a a");
	}

	wrr_set_replace(&s, NULL, 0);
	ktap_check(wrr_pick(&s) == -1, "an empty set picks nothing");
	wrr_set_free(&s);

	{
		struct in6_addr a;
		unsigned int l;

		ok = mg_prefix_parse("2001:db8:100::/48", &a, &l) && l == 48 &&
		     a.s6_addr[0] == 0x20 && a.s6_addr[5] == 0x00 && a.s6_addr[4] == 0x01 &&
		     mg_prefix_parse("::/0", &a, &l) && l == 0 &&
		     mg_prefix_parse("fc00::1/128", &a, &l) && l == 128;
		ktap_check(ok, "prefixes ADDR/LEN are read");
		ok = !mg_prefix_parse("2001:db8::", &a, &l) &&
		     !mg_prefix_parse("2001:db8::/129", &a, &l) &&
		     !mg_prefix_parse("2001:db8::/08", &a, &l) &&
		     !mg_prefix_parse("2001:db8::/-1", &a, &l) &&
		     !mg_prefix_parse("/48", &a, &l) &&
		     !mg_prefix_parse("10.0.0.0/8", &a, &l) &&
		     !mg_prefix_parse("2001:db8::/48 ", &a, &l) &&
		     !mg_prefix_parse("2001:db8::/", &a, &l);
		ktap_check(ok, "a length out of range, with a sign or a leading 0, IPv4, or none: refused");
	}
	return ktap_finish();
}
