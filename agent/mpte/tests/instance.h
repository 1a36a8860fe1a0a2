/* SPDX-License-Identifier: GPL-2.0 */
/*
 * instance.h - an instance of the tests' data (tests/data, or the
 * directory $MPTE_TESTDATA names): NAME.json and NAME-demands.json, read
 * and parsed as mpte-solve reads them.
 */
#ifndef MPTE_TEST_INSTANCE_H
#define MPTE_TEST_INSTANCE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpte_int.h"
#include "json_strict.h"

struct test_instance {
	struct json_object *tj, *dj;
	struct mpte_topology *t;
	struct mpte_demand_set *ds;
};

static inline const char *test_data_dir(void)
{
	return getenv("MPTE_TESTDATA") ? getenv("MPTE_TESTDATA") : "tests/data";
}

/*
 * 0, or -1 with @err saying why; what was loaded either way goes with
 * test_instance_free().
 */
static inline int test_instance_load(struct test_instance *in,
				     const char *name, char *err, size_t len)
{
	char path[512];

	memset(in, 0, sizeof(*in));
	snprintf(path, sizeof(path), "%s/%s.json", test_data_dir(), name);
	in->tj = json_strict_load(path, err, len);
	if (!in->tj)
		return -1;
	snprintf(path, sizeof(path), "%s/%s-demands.json", test_data_dir(),
		 name);
	in->dj = json_strict_load(path, err, len);
	if (!in->dj)
		return -1;
	in->t = mpte_topology_from_json(in->tj, err, len);
	if (!in->t)
		return -1;
	in->ds = mpte_demands_from_json(in->dj, in->t, err, len);
	return in->ds ? 0 : -1;
}

static inline void test_instance_free(struct test_instance *in)
{
	mpte_demands_free(in->ds);
	mpte_topology_free(in->t);
	if (in->tj)
		json_object_put(in->tj);
	if (in->dj)
		json_object_put(in->dj);
}

#endif
