/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The SMO's election calls (srd/election.h) in a thread of their own:
 * the steps (campaign, keep-alive) every third of the lease and the
 * leader's write of its set. Each call may wait up to a second for an
 * etcd member that does not answer; here that holds this thread, not
 * the agent's loop, which keeps serving its SRs, CLI and timers.
 *
 * The loop hands the thread a value to write and reads what the thread
 * last learnt (smo_elect_take) when it is woken (@wake, called from the
 * thread: a write to a pipe). Whether the SMO may act is not asked of
 * the thread: election_leading() is a deadline from the last successful
 * keep-alive, read from an atomic, so a leader whose thread is stuck in
 * a call still stops acting on time.
 */
#ifndef DMSC_SMO_ELECT_H
#define DMSC_SMO_ELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct election;
struct smo_elect;

/* What the thread learnt, as smo_elect_take() copies it out. */
struct smo_elect_state {
	uint64_t steps, errors;	/* steps made, and those that failed */
	int rc;			/* the last step's (election_step()) */
	char leader[64];	/* as the last step named it */
	char error[160];	/* of the last step that failed */
	/* the last write that ended, if one did since the last take */
	bool written;
	int put_rc;		/* election_put()'s */
	uint64_t term;		/* the write's etcd revision */
	uint64_t epoch;		/* etcd's cluster_id in its answer */
	char *value;		/* what was written: the caller's to free */
	char put_error[160];
	uint64_t handed, done;	/* values handed, and written or dropped */
};

/*
 * Step @el every @step_ms, the first at once. @el is the thread's until
 * smo_elect_stop(). NULL with @err.
 */
struct smo_elect *smo_elect_start(struct election *el, long step_ms,
				  void (*wake)(void *arg), void *arg,
				  char *err, size_t errlen);
/*
 * Write @value (taken) at @key as soon as the thread is free, replacing
 * a value handed before and not yet written (dropped, counted as done).
 */
void smo_elect_write(struct smo_elect *t, const char *key, char *value);
/* Copy out what the thread learnt; a write's outcome only once. */
void smo_elect_take(struct smo_elect *t, struct smo_elect_state *out);
/*
 * Stop the thread: at most the call under way (about a second) is waited
 * for. The election is the caller's again (to resign, to close).
 */
void smo_elect_stop(struct smo_elect *t);

#endif /* DMSC_SMO_ELECT_H */
