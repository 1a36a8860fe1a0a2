/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the mg role: mg_role.c (the SRD connection, the route table,
 * the choice, the counters) and mg_http.c (the HTTP entry) share this.
 * Both run on the agent's one libevent loop: libmicrohttpd is driven
 * from it (no thread of its own), so a request reads the route table
 * the loop keeps, without a lock or a copy.
 */
#ifndef DMSC_MG_H
#define DMSC_MG_H

#include <netinet/in.h>

#include "agent.h"
#include "mg_pick.h"
#include "route_table.h"

/* The outcome of a request: its HTTP status. */
enum mg_outcome {
	MG_OK,			/* 200 */
	MG_BAD_REQUEST,		/* 400 */
	MG_UNAUTHORIZED,	/* 401 */
	MG_FORBIDDEN,		/* 403 */
	MG_NOT_FOUND,		/* 404 */
	MG_METHOD,		/* 405 */
	MG_UNAVAILABLE,		/* 503 */
	MG_OUTCOMES
};

/* Why a request was refused. */
enum mg_reason {
	MG_R_METHOD,		/* not GET */
	MG_R_PATH,		/* not /v1/resolve */
	MG_R_QUERY,		/* the query: a field missing, repeated, bad, unknown */
	MG_R_TOKEN_MISSING,	/* no Authorization header */
	MG_R_TOKEN_SCHEME,	/* not "Bearer TOKEN" */
	MG_R_TOKEN_SIGNATURE,	/* not signed by the AAM's key (forged) */
	MG_R_TOKEN_EXPIRED,	/* expired or not yet valid */
	MG_R_TOKEN_REVOKED,	/* its jti is on the AAM's revoked list */
	MG_R_TOKEN_NODE,	/* issued for a node mg.token_nodes does not hold */
	MG_R_TOKEN_INVALID,	/* any other fault of the token */
	MG_R_SCOPE,		/* its scope does not hold the prefix */
	MG_R_NO_SERVICE,	/* no instance has the prefix */
	MG_R_NO_ACTIVE,		/* none of them is active */
	MG_REASONS
};

extern const char *const mg_outcome_names[MG_OUTCOMES];
extern const char *const mg_reason_names[MG_REASONS];

/* A service prefix asked for, its instances as of the table's gen. */
struct mg_service {
	char prefix[MSG_PREFIX_MAX];	/* as the instances write it */
	struct in6_addr addr;
	unsigned int len;
	uint64_t gen;			/* of the route table the set was built at */
	size_t ninst;			/* instances of the prefix, any state */
	struct wrr_set set;		/* the active ones */
	uint64_t chosen;
};

struct mg_http;

struct mg_role {
	struct agent *a;
	/* the SRD */
	struct conn *c;
	int up;
	size_t srd;			/* index in cfg.mg.srd */
	unsigned int backoff_ms;
	struct event *retry_ev, *dg_ev;
	uint64_t connects;
	uint64_t revoked_pushes;	/* the AAM's revoked lists received */
	struct route_table rt;
	/* the services asked for */
	struct mg_service *svc;
	size_t nsvc, svc_cap;
	/* the HTTP entry */
	struct mg_http *http;
	uint64_t outcomes[MG_OUTCOMES];
	uint64_t reasons[MG_REASONS];
	/* the refusals' log lines, at most cfg.mg.log_per_s a second */
	int64_t log_second;
	unsigned int log_lines;
	uint64_t log_suppressed;		/* in this second */
	uint64_t log_suppressed_total;
};

/*
 * Choose an instance of the service @addr/@len: 0 with it in @out, or
 * MG_R_NO_SERVICE or MG_R_NO_ACTIVE.
 */
int mg_resolve(struct mg_role *r, const struct in6_addr *addr,
	       unsigned int len, struct msg_instance *out);
/* A request's outcome, and if refused its reason and a log line. */
void mg_count(struct mg_role *r, enum mg_outcome o, int reason,
	      const char *client, const char *detail);
/* May a refusal be logged now? Counts those that may not. */
bool mg_log_allowed(struct mg_role *r);

struct mg_http *mg_http_start(struct mg_role *r);
void mg_http_stop(struct mg_http *h);
struct json_object *mg_http_show(struct mg_http *h);

#endif /* DMSC_MG_H */
