/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The route table (type 2) as a reader of the SRD keeps it: the sr and
 * mg roles both hold one, over their connection to an SRD. Applied once
 * each by revision: a full table replaces it; an increment whose "prev"
 * is not the table's revision means one was missed, and the reader asks
 * for the full table (type 1 "sync"); a periodic digest (type 1
 * "digest") lets the SRD find a table that went wrong anyway.
 */
#ifndef DMSC_ROUTE_TABLE_H
#define DMSC_ROUTE_TABLE_H

#include <stdint.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "msg_reg.h"

struct agent;
struct conn;

/*
 * No full table within one digest interval (within these bounds; the
 * upper one without digests) of connecting or of asking for it: the SRD's
 * store may have failed to list it, a sync may have been over its limit:
 * ask (again). The lower bound is twice the SRD's FULL_GAP_MS: a sync it
 * limited is sent from its tick after FULL_GAP_MS, and one asked again
 * before that would be limited too, and cost another table.
 */
#define SYNC_RETRY_MIN_MS	2000
#define SYNC_RETRY_MAX_MS	30000

struct route_table {
	/* set by route_table_init(); c by route_table_conn_up() */
	struct agent *a;
	struct conn *c;
	const char *who;		/* the role in the log: "sr", "mg" */
	unsigned int retry_ms;		/* no full table within it: ask */
	struct event *sync_ev;
	struct msg_instance *routes;
	size_t n, cap;
	uint64_t rev;
	/* bumped at every change: a reader's cache built on it is stale */
	uint64_t gen;
	int sync_asked;
	int synced;			/* a full table on this connection */
	uint64_t fulls, increments, gaps, stale, digests, sync_retries;
};

enum route_apply {
	ROUTES_FULL,		/* the table was replaced */
	ROUTES_INCREMENT,	/* the changes were applied */
	ROUTES_STALE,		/* had it already: nothing done */
	ROUTES_GAP,		/* one was missed: the full table asked for */
};

/*
 * A table for role @who of @a, whose digests go every @digest_ms (0:
 * none), which sets when a missing full table is asked for again. 0, or
 * -1 if its timer cannot be made.
 */
int route_table_init(struct route_table *t, struct agent *a, const char *who,
		     unsigned int digest_ms);
struct msg_instance *route_table_find(struct route_table *t, const char *id);
int route_table_put(struct route_table *t, const struct msg_instance *m);
void route_table_del(struct route_table *t, const char *id);
/*
 * Apply @m received on the connection; on a gap ask it for the full table
 * (once until it comes, again if it does not come in time).
 */
enum route_apply route_table_apply(struct route_table *t,
				   const struct msg_routes *m);
/*
 * A new connection @c to an SRD: nothing asked on it yet, no table from
 * it yet; the SRD sends the full table unasked, and is asked for it if it
 * does not come in time.
 */
void route_table_conn_up(struct route_table *t, struct conn *c);
/* The connection ended: the table stays, nothing is awaited. */
void route_table_conn_down(struct route_table *t);
/* The digest of the table to the SRD. */
void route_table_send_digest(struct route_table *t);
/* Its counters into @o, and the routes as "routes" if @with_routes. */
void route_table_json(const struct route_table *t, struct json_object *o,
		      int with_routes);
void route_table_free(struct route_table *t);

#endif /* DMSC_ROUTE_TABLE_H */
