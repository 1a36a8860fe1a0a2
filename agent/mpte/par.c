// SPDX-License-Identifier: GPL-2.0
/*
 * par.c - independent searches on more than one core.
 *
 * Some of the solver's work is one Dijkstra per demand group under one
 * fixed set of lengths: the dual bound's, and the cheap pass's within a
 * batch (cheap.c).  Those searches do not depend on each other, so they
 * can run side by side, each worker in its own workspace.  Every result
 * goes to the slot of its index and callers combine the slots in index
 * order, so the outcome does not depend on how many threads ran or which
 * took what: the same input gives the same routing on any machine.
 */
#define _GNU_SOURCE	/* sched_getaffinity, CPU_COUNT */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "mpte_int.h"

#define PAR_MAX_WORKERS	8

struct par_job {
	void (*fn)(void *arg, int i, int worker);
	void *arg;
	int n;
	int next;		/* the next index to take, atomically */
};

struct par_worker {
	struct par_job *job;
	int id;
};

static void *par_run(void *p)
{
	struct par_worker *w = p;
	struct par_job *job = w->job;
	int i;

	while ((i = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED)) <
	       job->n)
		job->fn(job->arg, i, w->id);
	return NULL;
}

/* The CPUs this process may run on (a container's or taskset's), not
 * the machine's. */
static long cpus_usable(void)
{
	cpu_set_t set;

	if (!sched_getaffinity(0, sizeof(set), &set))
		return CPU_COUNT(&set);
	return sysconf(_SC_NPROCESSORS_ONLN);
}

int mpte_par_workers(void)
{
	const char *e = getenv("MPTE_THREADS");
	long n = e ? atol(e) : cpus_usable();

	if (n < 1)
		n = 1;
	return n > PAR_MAX_WORKERS ? PAR_MAX_WORKERS : (int)n;
}

/*
 * fn(arg, i, w) for every i in [0, n), on up to nworkers threads (this
 * one among them); w < nworkers names the worker's own workspace.  A
 * thread that cannot be started leaves its share to the others.
 */
void mpte_par_for(int n, int nworkers, void (*fn)(void *arg, int i, int w),
		  void *arg)
{
	struct par_job job = { .fn = fn, .arg = arg, .n = n };
	struct par_worker w[PAR_MAX_WORKERS];
	pthread_t tid[PAR_MAX_WORKERS];
	bool started[PAR_MAX_WORKERS] = { false };
	int k;

	if (nworkers > PAR_MAX_WORKERS)
		nworkers = PAR_MAX_WORKERS;
	if (nworkers > n)
		nworkers = n;
	for (k = 0; k < nworkers; k++) {
		w[k].job = &job;
		w[k].id = k;
	}
	for (k = 1; k < nworkers; k++)
		started[k] = !pthread_create(&tid[k], NULL, par_run, &w[k]);
	if (nworkers > 0)
		par_run(&w[0]);
	for (k = 1; k < nworkers; k++)
		if (started[k])
			pthread_join(tid[k], NULL);
}
