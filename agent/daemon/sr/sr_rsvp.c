// SPDX-License-Identifier: GPL-2.0
/*
 * The RSVP-CBFC speaker inside the sr role (sr_rsvp.h). The speaker is
 * the one dmsc-rsvp runs: the same set-up, refresh, expiry and teardown,
 * the same control socket (dmsc-rsvp -C SOCK setup|teardown|status ...
 * talks to either), only the loop is libevent's instead of poll().
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "log.h"
#include "rsvp_speaker.h"
#include "sr_rsvp.h"

/* How often, in ticks, the policies' flows are looked after. */
#define DRIVE_TICKS	(1000 / RSVP_SPEAKER_TICK_MS)

/* A credit flow of a policy. */
struct flow_want {
	struct pol_credit c;
	char policy[POLICY_NAME_MAX];
	uint32_t tunnel;	/* the policy's: its kernel tunnel's id */
	bool wanted;		/* in the policies still (during a sync) */
	bool owned;		/* set up by this code, not yet torn down */
	int64_t tried_ms;	/* the last set-up or retry; 0 never */
	unsigned int wait_ms;	/* before the next: doubles while it fails */
	char why[200];		/* the last refusal or failure, "" none */
};

struct sr_rsvp {
	struct rsvp_speaker *sp;
	struct event *io[RSVP_SPEAKER_FDS];
	struct event *tick;
	unsigned int ticks;
	struct flow_want *fw;
	size_t nfw;
	uint64_t setups, teardowns, retries, refusals, backup_changes;
};

static const char *flow_text(const struct pol_credit *c, char *buf,
			     size_t len)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];

	inet_ntop(c->flow.src.family, c->flow.src.a, s, sizeof(s));
	inet_ntop(c->flow.dst.family, c->flow.dst.a, d, sizeof(d));
	snprintf(buf, len, "%s:%u > %s QP %u", s, c->flow.sport, d,
		 c->flow.qpn);
	return buf;
}

static void teardown(struct sr_rsvp *r, struct flow_want *w)
{
	if (!w->owned)
		return;
	rsvp_speaker_teardown(r->sp, &w->c.flow, RSVP_OWNER_POLICY);
	w->owned = false;
	r->teardowns++;
}

/* Said once per reason, not at every retry; "" when it came up. */
static void note(struct flow_want *w, const char *why)
{
	char buf[128];

	if (!strcmp(why, w->why))
		return;
	if (why[0])
		agent_log("sr: policy %s: credit flow %s: %s", w->policy,
			  flow_text(&w->c, buf, sizeof(buf)), why);
	else
		agent_log("sr: policy %s: credit flow %s: up", w->policy,
			  flow_text(&w->c, buf, sizeof(buf)));
	snprintf(w->why, sizeof(w->why), "%s", why);
}

static void backoff(struct flow_want *w, int64_t now)
{
	w->tried_ms = now;
	w->wait_ms = w->wait_ms ? w->wait_ms * 2 : SR_RSVP_RETRY_MS;
	if (w->wait_ms > SR_RSVP_RETRY_MAX_MS)
		w->wait_ms = SR_RSVP_RETRY_MAX_MS;
}

static void setup(struct sr_rsvp *r, struct flow_want *w, int64_t now)
{
	char why[sizeof(w->why)];

	if (rsvp_speaker_setup(r->sp, &w->c.flow, RSVP_OWNER_POLICY, w->tunnel,
			       w->c.path, w->c.npath, w->c.backup, w->c.nbackup,
			       why, sizeof(why))) {
		r->refusals++;
		note(w, why);
		backoff(w, now);
		return;
	}
	w->owned = true;
	w->tried_ms = now;
	r->setups++;
}

/*
 * Each wanted flow set up; one refused (set up by hand already, no room)
 * is asked again after a backoff from SR_RSVP_RETRY_MS doubling to
 * SR_RSVP_RETRY_MAX_MS, and so is each failed list of one set up (the
 * hop did not answer, or refused): only that list, a primary that is up
 * stays as it is. One gone from the speaker (torn down by hand) is set
 * up again.
 */
static void drive(struct sr_rsvp *r)
{
	int64_t now = agent_now_ms();

	for (size_t i = 0; i < r->nfw; i++) {
		struct flow_want *w = &r->fw[i];
		bool due = !w->tried_ms || now - w->tried_ms >= w->wait_ms;
		char why[sizeof(w->why)] = "";

		if (!w->owned) {
			if (due)
				setup(r, w, now);
			continue;
		}
		switch (rsvp_speaker_status(r->sp, &w->c.flow,
					    RSVP_OWNER_POLICY, why,
					    sizeof(why))) {
		case RSVP_NONE:
			w->owned = false;
			setup(r, w, now);
			break;
		case RSVP_UP:
			note(w, "");
			w->wait_ms = 0;
			break;
		case RSVP_FAILED:
			note(w, why);
			if (due) {
				r->retries++;
				rsvp_speaker_retry(r->sp, &w->c.flow,
						   RSVP_OWNER_POLICY);
				backoff(w, now);
			}
			break;
		case RSVP_WAIT:
			break;
		}
	}
}

/* @a and @b the same flow along the same primary, backups aside. */
static bool same_primary(const struct pol_credit *a, const struct pol_credit *b)
{
	struct pol_credit x = *b;

	x.nbackup = a->nbackup;
	memcpy(x.backup, a->backup, sizeof(x.backup));
	return pol_credit_eq(a, &x);
}

/*
 * @w's hops are now @c, its tunnel @tunnel. Only the backup list
 * changed: that list alone is signalled anew, the primary and its
 * kernel session kept. Anything else: down the old hops first, then set
 * up anew (the kernel session's tunnel is fixed when it is made).
 */
static void change(struct sr_rsvp *r, struct flow_want *w,
		   const struct pol_credit *c, uint32_t tunnel)
{
	char why[sizeof(w->why)];

	if (w->owned && tunnel == w->tunnel && same_primary(&w->c, c) &&
	    !rsvp_speaker_set_backup(r->sp, &c->flow, RSVP_OWNER_POLICY,
				     c->backup, c->nbackup, why, sizeof(why))) {
		w->c = *c;
		r->backup_changes++;
		return;
	}
	teardown(r, w);
	w->c = *c;
	w->tunnel = tunnel;
	w->tried_ms = 0;
	w->wait_ms = 0;
	w->why[0] = '\0';
}

void sr_rsvp_want(struct sr_rsvp *r, const struct policy *p, size_t n)
{
	struct flow_want *fw;
	size_t i, j, k;

	for (i = 0; i < r->nfw; i++)
		r->fw[i].wanted = false;
	for (i = 0; i < n; i++) {
		for (k = 0; k < p[i].ncredit; k++) {
			const struct pol_credit *c = &p[i].credit[k];

			for (j = 0; j < r->nfw; j++)
				if (rsvp_flow_eq(&r->fw[j].c.flow, &c->flow))
					break;
			if (j < r->nfw && r->fw[j].wanted)
				continue;	/* two policies, one flow: the first */
			if (j == r->nfw) {
				fw = realloc(r->fw, (r->nfw + 1) * sizeof(*fw));
				if (!fw) {
					agent_log("sr: out of memory for credit flows");
					continue;
				}
				r->fw = fw;
				memset(&r->fw[j], 0, sizeof(r->fw[j]));
				r->fw[j].c = *c;
				r->fw[j].tunnel = p[i].tunnel;
				r->nfw++;
			} else if (!pol_credit_eq(&r->fw[j].c, c) ||
				   r->fw[j].tunnel != p[i].tunnel) {
				change(r, &r->fw[j], c, p[i].tunnel);
			}
			r->fw[j].wanted = true;
			snprintf(r->fw[j].policy, sizeof(r->fw[j].policy), "%s",
				 p[i].name);
		}
	}
	for (i = 0; i < r->nfw;) {
		if (r->fw[i].wanted) {
			i++;
			continue;
		}
		teardown(r, &r->fw[i]);
		r->fw[i] = r->fw[--r->nfw];
	}
	drive(r);
}

static void on_input(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	rsvp_speaker_input(arg, fd);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct sr_rsvp *r = arg;

	(void)fd;
	(void)what;
	rsvp_speaker_tick(r->sp);
	if (r->nfw && ++r->ticks % DRIVE_TICKS == 0)
		drive(r);
}

/* The configuration's strings, checked when it was parsed (config.c). */
static void host(const char *text, int family, struct rsvp_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (text[0] && inet_pton(family, text, a->a) == 1)
		a->family = family;
}

struct sr_rsvp *sr_rsvp_start(struct event_base *base,
			      const struct rsvp_config *cfg, bool kernel)
{
	struct timeval tv = { 0, RSVP_SPEAKER_TICK_MS * 1000 };
	struct rsvp_speaker_cfg c = {
		.credit = cfg->credit,
		.form = cfg->mb ? RSVP_CTYPE_CREDIT_MB :
				  RSVP_CTYPE_CREDIT_CUMULATIVE,
		.refresh_ms = cfg->refresh_ms,
		.retry_ms = cfg->retry_ms,
		.retries = cfg->retries,
		.ctl_path = cfg->control,
		.no_kernel = !kernel,
	};
	struct sr_rsvp *r = calloc(1, sizeof(*r));
	int fds[RSVP_SPEAKER_FDS];

	if (!r)
		return NULL;
	host(cfg->address6, AF_INET6, &c.addr6);
	host(cfg->address4, AF_INET, &c.addr4);
	r->sp = rsvp_speaker_open(&c);
	if (!r->sp) {
		agent_log("sr: the RSVP-CBFC speaker did not start (sr.rsvp)");
		goto fail;
	}
	rsvp_speaker_fds(r->sp, fds);
	for (int i = 0; i < RSVP_SPEAKER_FDS; i++) {
		if (fds[i] < 0)
			continue;
		r->io[i] = event_new(base, fds[i], EV_READ | EV_PERSIST,
				     on_input, r->sp);
		if (!r->io[i] || event_add(r->io[i], NULL))
			goto fail;
	}
	r->tick = event_new(base, -1, EV_PERSIST, on_tick, r);
	if (!r->tick || event_add(r->tick, &tv))
		goto fail;
	agent_log("sr: RSVP-CBFC speaker on %s%s%s, control %s",
		  cfg->address6, cfg->address6[0] && cfg->address4[0] ? " " : "",
		  cfg->address4, cfg->control);
	return r;
fail:
	sr_rsvp_stop(r);
	return NULL;
}

void sr_rsvp_stop(struct sr_rsvp *r)
{
	if (!r)
		return;
	if (r->tick)
		event_free(r->tick);
	for (int i = 0; i < RSVP_SPEAKER_FDS; i++)
		if (r->io[i])
			event_free(r->io[i]);
	rsvp_speaker_close(r->sp);
	free(r->fw);
	free(r);
}

struct json_object *sr_rsvp_show(const struct sr_rsvp *r)
{
	static const char *const names[] = {
		[RSVP_NONE] = "none", [RSVP_UP] = "up", [RSVP_WAIT] = "wait",
		[RSVP_FAILED] = "failed",
	};
	struct json_object *o = rsvp_speaker_json(r->sp);
	struct json_object *a = json_object_new_array();
	char buf[128];

	for (size_t i = 0; i < r->nfw; i++) {
		const struct flow_want *w = &r->fw[i];
		struct json_object *x = json_object_new_object();
		enum rsvp_status st = RSVP_NONE;
		enum rsvp_backup bk = RSVP_BACKUP_NONE;

		if (w->owned) {
			st = rsvp_speaker_status(r->sp, &w->c.flow,
						 RSVP_OWNER_POLICY,
						 NULL, 0);
			bk = rsvp_speaker_backup(r->sp, &w->c.flow,
						 RSVP_OWNER_POLICY);
		}
		json_object_object_add(x, "policy",
				       json_object_new_string(w->policy));
		json_object_object_add(x, "flow", json_object_new_string(
			flow_text(&w->c, buf, sizeof(buf))));
		json_object_object_add(x, "status", json_object_new_string(
			w->owned ? names[st] : w->why[0] ? "refused" : "pending"));
		if (w->why[0])
			json_object_object_add(x, "why",
					       json_object_new_string(w->why));
		json_object_object_add(x, "tunnel",
				       json_object_new_uint64(w->tunnel));
		/* Whether the backup's credit is in the kernel session. */
		if (w->c.nbackup)
			json_object_object_add(x, "backup_kernel",
				json_object_new_string(rsvp_backup_name(bk)));
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "policy_flows", a);
	json_object_object_add(o, "policy_setups",
			       json_object_new_uint64(r->setups));
	json_object_object_add(o, "policy_teardowns",
			       json_object_new_uint64(r->teardowns));
	json_object_object_add(o, "policy_retries",
			       json_object_new_uint64(r->retries));
	json_object_object_add(o, "policy_refusals",
			       json_object_new_uint64(r->refusals));
	json_object_object_add(o, "policy_backup_changes",
			       json_object_new_uint64(r->backup_changes));
	return o;
}
