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

#endif /* _DMSC_COMPAT_H */
