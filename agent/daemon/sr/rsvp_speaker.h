/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RSVP-CBFC speaker of one node: hop-by-hop set-up (PATH down the
 * hops, RESV back up, a kernel credit session per hop) and teardown, on
 * raw IPPROTO_RSVP sockets. Documentation/cbfc.md, "Signalling". The sr
 * role of dmsc-agent runs it on its event loop (sr_rsvp.c); dmsc-rsvp
 * (rsvp_main.c) runs it without the daemon, in a poll loop.
 */
#ifndef DMSC_RSVP_SPEAKER_H
#define DMSC_RSVP_SPEAKER_H

#include <stddef.h>
#include <stdint.h>

#include "rsvp.h"

/* Counters the speaker prints (ctl "stats"), by name. */
enum rsvp_counter {
	RC_RX_PATH, RC_RX_RESV, RC_RX_PATHTEAR, RC_RX_PATHERR,
	RC_TX_PATH, RC_TX_RESV, RC_TX_PATHTEAR, RC_TX_PATHERR,
	RC_RETRANSMITS,		/* PATH sent again, no RESV yet */
	RC_GAVE_UP,		/* next hop silent after the retries */
	RC_EXPIRED,		/* path state not refreshed in time */
	RC_UNKNOWN_SESSION,	/* RESV/PathTear/PathErr without state */
	RC_KERNEL_ERRORS,	/* the kernel refused SESSION_NEW/DEL */
	RC_SESSIONS_ADDED, RC_SESSIONS_DELETED,
	RC_IGNORED_OBJECTS,	/* 10bbbbbb/11bbbbbb objects skipped */
	RC_TABLE_FULL,
	RC_BACKUPS_SET,		/* a backup's credit handed to the kernel */
	RC_BACKUPS_CLEARED,	/* taken back: the backup failed or went */
	RC_BACKUP_MOVED,	/* SESSION_SET: on its backup or failed (EBUSY) */
	RC_BACKUP_NO_SESSION,	/* SESSION_SET: no kernel session (ENOENT) */
	RC_TAIL_SHARED,		/* a tail state whose flow's session is another's */
	RC_TAIL_NO_RETURNS,	/* a tail state without one: its prev is IPv4 */
	RC_TAIL_REPLACED,	/* a session found there (by hand, a dead speaker) */
	/* the kernel's events (DMSC_CMD_EVENT on "events"), at a source */
	RC_EVENTS_SEEN,		/* every event read */
	RC_EVENTS_IGNORED,	/* not about a flow set up here, nothing to do */
	RC_EVENTS_MALFORMED,	/* refused by dmsc_nl_event_decode() */
	RC_EVENTS_LOST,		/* the socket overran (ENOBUFS) or failed */
	RC_RESYNCS,		/* tunnels dumped to catch up after a loss */
	RC_FAILOVERS_HANDLED,	/* flows whose primary the speaker left */
	RC_PRIMARY_TORN,	/* ... PathTear sent down the primary */
	RC_PRIMARY_RESIGNALLED,	/* tunnel back on its primary: signalled anew */
	RC_FAILOVER_NO_BACKUP,	/* tunnel-backup for a flow whose session has no backup */
	RC_COUNT
};

struct rsvp_speaker_cfg {
	struct rsvp_addr addr6, addr4;	/* own addresses; family 0 if none */
	uint64_t credit;	/* bytes this node reserves for upstream */
	uint8_t form;		/* RSVP_CTYPE_CREDIT_MB or _CUMULATIVE */
	uint32_t refresh_ms;	/* PATH refresh period R */
	uint32_t retry_ms;	/* PATH retransmission, doubled each time */
	unsigned int retries;	/* retransmissions before giving up */
	const char *ctl_path;	/* unix socket for dmsc-rsvp's commands */
	bool no_kernel;		/* no dmsc.ko: state only (unit use) */
};

struct rsvp_speaker;
struct json_object;
struct nlattr;

/*
 * Who set a flow up at its source: the control socket, or a caller's own
 * tag (sr_rsvp.c's policies), so that each tears down and retries only
 * its own. ANY: whoever (a teardown by hand).
 */
#define RSVP_OWNER_CTL		0u
#define RSVP_OWNER_POLICY	1u
#define RSVP_OWNER_ANY		UINT32_MAX

/* A flow's lists at its source, the one furthest behind. */
enum rsvp_status { RSVP_NONE, RSVP_UP, RSVP_WAIT, RSVP_FAILED };

/*
 * The backup list's credit at the source: handed to the primary's
 * kernel session (DMSC_SESSION_A_BACKUP_*) once both lists are up, if
 * the flow has a tunnel, for the heartbeat's failover to move onto.
 */
enum rsvp_backup {
	RSVP_BACKUP_NONE,	/* no backup list, or no tunnel */
	RSVP_BACKUP_NO,		/* not in the kernel: a list is not up */
	RSVP_BACKUP_KERNEL,	/* in the primary's kernel session */
	RSVP_BACKUP_MOVED,	/* the kernel session moved onto it (or failed) */
	RSVP_BACKUP_NO_SESSION,	/* the kernel had no session to take it */
	RSVP_BACKUP_REFUSED,	/* the kernel refused it (logged) */
};

/*
 * The sockets to watch for input: IPv6, IPv4, control, the kernel's
 * events; -1 for none.
 */
#define RSVP_SPEAKER_FDS	4
/* How often rsvp_speaker_tick() must run: retries, refreshes, expiry. */
#define RSVP_SPEAKER_TICK_MS	50

/* Sockets open, netlink too: NULL after an error it printed. */
struct rsvp_speaker *rsvp_speaker_open(const struct rsvp_speaker_cfg *cfg);
void rsvp_speaker_fds(const struct rsvp_speaker *s,
		      int fds[RSVP_SPEAKER_FDS]);
/* @fd of rsvp_speaker_fds() is readable. */
void rsvp_speaker_input(struct rsvp_speaker *s, int fd);
void rsvp_speaker_tick(struct rsvp_speaker *s);
/* Every state dropped and its kernel session deleted, then freed. */
void rsvp_speaker_close(struct rsvp_speaker *s);
/*
 * Set @f up from this node, its source, for @owner along @path and
 * @backup (the hops' own addresses; nbackup 0: none): PATH goes now,
 * RESVs come back later (rsvp_speaker_status). @tunnel (0: none) is the
 * dmsc tunnel steering @f, given to its kernel session, which then also
 * takes the backup's credit (rsvp_speaker_backup). 0, or -1 with the
 * reason in @err and nothing changed; refused if anyone set @f up here
 * already. What dmsc-rsvp -C SOCK setup asks, as RSVP_OWNER_CTL.
 */
int rsvp_speaker_setup(struct rsvp_speaker *s, const struct rsvp_flow *f,
		       uint32_t owner, uint32_t tunnel,
		       const struct rsvp_addr *path, unsigned int npath,
		       const struct rsvp_addr *backup, unsigned int nbackup,
		       char *err, size_t errlen);
/*
 * @owner's @f set up here gets @backup as its backup list (nbackup 0:
 * none), its primary untouched: PathTear down the old one, PATH down the
 * new one, the kernel's copy of the old one's credit taken back. 0, or
 * -1 with the reason in @err and nothing changed.
 */
int rsvp_speaker_set_backup(struct rsvp_speaker *s, const struct rsvp_flow *f,
			    uint32_t owner,
			    const struct rsvp_addr *backup, unsigned int nbackup,
			    char *err, size_t errlen);
/* PathTear down each of @owner's lists of @f, its session gone: how many. */
unsigned int rsvp_speaker_teardown(struct rsvp_speaker *s,
				   const struct rsvp_flow *f, uint32_t owner);
/* Each failed list of @f (@owner's) signalled again; the others kept. */
unsigned int rsvp_speaker_retry(struct rsvp_speaker *s,
				const struct rsvp_flow *f, uint32_t owner);
/* @f at this source (@owner's); with RSVP_FAILED, @why says which list why. */
enum rsvp_status rsvp_speaker_status(const struct rsvp_speaker *s,
				     const struct rsvp_flow *f,
				     uint32_t owner, char *why, size_t len);
/* Where @f's backup credit is (@owner's flow). */
enum rsvp_backup rsvp_speaker_backup(const struct rsvp_speaker *s,
				     const struct rsvp_flow *f, uint32_t owner);
/* "none", "no", "yes", "moved", "no-session", "refused". */
const char *rsvp_backup_name(enum rsvp_backup b);
/*
 * One DMSC_CMD_EVENT message's top-level attributes (what the events
 * socket delivers; the tests build their own): decoded (nl_event.h) and
 * acted on at a flow's source. A heartbeat failure or a link down that
 * moved the flow's session onto its backup (on-backup 1), or its tunnel
 * switched to the backup: the primary's PATH refreshes stop, a PathTear
 * goes down it, the backup list is signalled if it was not. The tunnel
 * switched back: the backup torn down and held, the primary signalled
 * anew. Anything else is counted and ignored.
 */
void rsvp_speaker_event(struct rsvp_speaker *s, struct nlattr **top);
/* Counters, refusals by reason and the number of states. */
struct json_object *rsvp_speaker_json(const struct rsvp_speaker *s);

/* Open, poll until SIGTERM/SIGINT, close; 0, or 1 after an error. */
int rsvp_speaker_run(const struct rsvp_speaker_cfg *cfg);

#endif /* DMSC_RSVP_SPEAKER_H */
