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

#include "log.h"
#include "rsvp_speaker.h"
#include "sr_rsvp.h"

struct sr_rsvp {
	struct rsvp_speaker *sp;
	struct event *io[RSVP_SPEAKER_FDS];
	struct event *tick;
};

static void on_input(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	rsvp_speaker_input(arg, fd);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	rsvp_speaker_tick(arg);
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
	r->tick = event_new(base, -1, EV_PERSIST, on_tick, r->sp);
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
	free(r);
}

struct json_object *sr_rsvp_show(const struct sr_rsvp *r)
{
	return rsvp_speaker_json(r->sp);
}
