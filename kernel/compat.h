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
 * it the message must outlive the handler: genetlink drops genl_mutex
 * before netlink_ack() copies the text. A small ring of buffers serves;
 * a slot is reused only after DMSC_EXTACK_SLOTS more formatted errors,
 * far more than can pass between a handler's return and its ack.
 */
#ifndef NL_SET_ERR_MSG_FMT
#define DMSC_EXTACK_LEN		80
#define DMSC_EXTACK_SLOTS	16
char *dmsc_extack_slot(void);
#define NL_SET_ERR_MSG_FMT(extack, fmt, args...) do {			\
	struct netlink_ext_ack *__extack = (extack);			\
	char *__buf;							\
									\
	if (__extack) {							\
		__buf = dmsc_extack_slot();				\
		snprintf(__buf, DMSC_EXTACK_LEN, fmt, ##args);		\
		__extack->_msg = __buf;					\
	}								\
} while (0)
#define DMSC_NEED_EXTACK_SLOTS
#endif

#endif /* _DMSC_COMPAT_H */
