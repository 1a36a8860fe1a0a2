// SPDX-License-Identifier: GPL-2.0
/* Counters of refused connections and messages (reject.h). */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "reject.h"

void reject_note(struct rejects *r, const char *reason, const char *peer,
		 const char *why)
{
	size_t i, k = r->total % REJECT_RECENT;

	for (i = 0; i < r->nby && strcmp(r->by[i].reason, reason); i++)
		;
	if (i == r->nby && r->nby < REJECT_REASONS)
		snprintf(r->by[r->nby++].reason, sizeof(r->by[0].reason), "%s",
			 reason);
	if (i < r->nby)
		r->by[i].n++;
	r->recent[k].when = time(NULL);
	snprintf(r->recent[k].reason, sizeof(r->recent[k].reason), "%s", reason);
	snprintf(r->recent[k].peer, sizeof(r->recent[k].peer), "%s", peer);
	snprintf(r->recent[k].why, sizeof(r->recent[k].why), "%s", why);
	r->total++;
	agent_log("rejected (%s) from %s: %s", reason, peer, why);
}

uint64_t reject_count(const struct rejects *r, const char *reason)
{
	for (size_t i = 0; i < r->nby; i++)
		if (!strcmp(r->by[i].reason, reason))
			return r->by[i].n;
	return 0;
}

struct json_object *reject_json(const struct rejects *r)
{
	struct json_object *o = json_object_new_object(), *by, *rec;
	uint64_t n = r->total < REJECT_RECENT ? r->total : REJECT_RECENT;

	json_object_object_add(o, "total", json_object_new_uint64(r->total));
	by = json_object_new_object();
	for (size_t i = 0; i < r->nby; i++)
		json_object_object_add(by, r->by[i].reason,
				       json_object_new_uint64(r->by[i].n));
	json_object_object_add(o, "by_reason", by);
	rec = json_object_new_array();
	/* oldest first */
	for (uint64_t j = r->total - n; j < r->total; j++) {
		const typeof(r->recent[0]) *e = &r->recent[j % REJECT_RECENT];
		struct json_object *x = json_object_new_object();

		json_object_object_add(x, "when", json_object_new_int64(e->when));
		json_object_object_add(x, "reason", json_object_new_string(e->reason));
		json_object_object_add(x, "peer", json_object_new_string(e->peer));
		json_object_object_add(x, "why", json_object_new_string(e->why));
		json_object_array_add(rec, x);
	}
	json_object_object_add(o, "recent", rec);
	return o;
}
