/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels dmsc builds against (Debian's 6.1 and
 * 6.12) live here, so that the rest of the module reads like mainline.
 */
#ifndef _DMSC_COMPAT_H
#define _DMSC_COMPAT_H

#include <linux/version.h>
#include <net/genetlink.h>

/*
 * The attributes a dump request carried, parsed against the family
 * policy. 6.6 folded them into a struct genl_info inside the dump info.
 */
static inline struct nlattr **dmsc_dump_attrs(struct netlink_callback *cb)
{
#if KERNEL_VERSION(6, 6, 0) <= LINUX_VERSION_CODE
	return genl_dumpit_info(cb)->info.attrs;
#else
	return genl_dumpit_info(cb)->attrs;
#endif
}

/*
 * Work run in softirq context, on the CPU that queued it: a BH workqueue
 * since 6.9, a tasklet before (6.9 made the workqueues that replace them).
 */
#if KERNEL_VERSION(6, 9, 0) <= LINUX_VERSION_CODE
#include <linux/workqueue.h>
struct dmsc_bh {
	struct work_struct work;
};

static inline void dmsc_bh_init(struct dmsc_bh *bh, work_func_t fn)
{
	INIT_WORK(&bh->work, fn);
}

static inline void dmsc_bh_queue(struct dmsc_bh *bh)
{
	queue_work(system_bh_highpri_wq, &bh->work);
}

static inline void dmsc_bh_cancel(struct dmsc_bh *bh)
{
	cancel_work_sync(&bh->work);
}

#define DMSC_BH_ARG struct work_struct *
#else
#include <linux/interrupt.h>
struct dmsc_bh {
	struct tasklet_struct work;
};

static inline void dmsc_bh_init(struct dmsc_bh *bh,
				void (*fn)(struct tasklet_struct *))
{
	tasklet_setup(&bh->work, fn);
}

static inline void dmsc_bh_queue(struct dmsc_bh *bh)
{
	tasklet_hi_schedule(&bh->work);
}

static inline void dmsc_bh_cancel(struct dmsc_bh *bh)
{
	tasklet_kill(&bh->work);
}

#define DMSC_BH_ARG struct tasklet_struct *
#endif

/* The struct holding a struct dmsc_bh, from the callback's argument. */
#define dmsc_bh_from(ptr, type, member) \
	container_of(ptr, type, member.work)

/* 6.5 moved the GSO helpers out of netdevice.h. */
#if KERNEL_VERSION(6, 5, 0) <= LINUX_VERSION_CODE
#include <net/gso.h>
#endif

/*
 * 6.2 gave the extack a buffer of its own for formatted messages. Before
 * it the message must outlive the handler: netlink_ack() copies it after
 * the handler returned. Each task formats into a buffer of its own
 * (genl.c): a task is in one request at a time, so by the time it
 * formats again its last ack is sent. If no buffer can be had (there
 * are at most 64), the format string itself is the message.
 */
#ifndef NL_SET_ERR_MSG_FMT
#define DMSC_EXTACK_LEN		80
char *dmsc_extack_buf(void);
#define NL_SET_ERR_MSG_FMT(extack, fmt, args...) do {			\
	struct netlink_ext_ack *__extack = (extack);			\
	char *__buf;							\
									\
	if (__extack) {							\
		__buf = dmsc_extack_buf();				\
		if (__buf) {						\
			snprintf(__buf, DMSC_EXTACK_LEN, fmt, ##args);	\
			__extack->_msg = __buf;				\
		} else {						\
			__extack->_msg = fmt;				\
		}							\
	}								\
} while (0)
#define DMSC_NEED_EXTACK_BUF
void dmsc_extack_bufs_free(void);
#else
static inline void dmsc_extack_bufs_free(void)
{
}
#endif

#endif /* _DMSC_COMPAT_H */
