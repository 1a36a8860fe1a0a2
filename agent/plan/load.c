// SPDX-License-Identifier: GPL-2.0
/*
 * load.c - one problem from its documents, the one way dmsc plan segment
 * and the unit tests build it: model, sites, limits, the caller's
 * adjustments, then plan_problem_new().
 */
#include <stdio.h>

#include "plan_int.h"

struct plan_problem *plan_problem_load(const struct plan_docs *d,
				       struct plan_limits *lim,
				       plan_adjust_fn *adjust, void *arg,
				       char *err, size_t errlen)
{
	struct plan_model *m = NULL;
	struct plan_sites *s = NULL;
	char why[512];

	/* each document's errors begin with its name, as a file's path */
	if (!(m = plan_model_from_json(d->model, why, sizeof(why)))) {
		snprintf(err, errlen, "%s: %s", d->model_name, why);
		goto fail;
	}
	if (!(s = plan_sites_from_json(d->sites, why, sizeof(why)))) {
		snprintf(err, errlen, "%s: %s", d->sites_name, why);
		goto fail;
	}
	if (d->limits && plan_limits_from_json(d->limits, lim, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s", d->limits_name, why);
		goto fail;
	}
	if (adjust && adjust(lim, arg, err, errlen))
		goto fail;
	return plan_problem_new(m, s, lim, err, errlen);
fail:
	plan_model_free(m);
	plan_sites_free(s);
	return NULL;
}
