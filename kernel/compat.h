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
