/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What q_cbfc.so needs of the tc binary that loads it, declared by hand:
 * Debian ships no iproute2 development headers. The layouts and
 * prototypes are those of iproute2 6.1 (Debian bookworm's tc), read from
 * its tc/tc_util.h, include/json_print.h, include/color.h,
 * include/utils.h and include/libnetlink.h; the functions are resolved
 * against the symbols tc exports (nm -D /usr/sbin/tc lists them all).
 * A different iproute2 may change struct qdisc_util: 6.9 made its
 * callbacks take a const pointer, which is ABI-compatible, but a new
 * member before has_block would not be.
 */
#ifndef DMSC_TC_ABI_H
#define DMSC_TC_ABI_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

/* tc/tc_util.h: tc finds "<kind>_qdisc_util" in q_<kind>.so. */
struct qdisc_util {
	struct qdisc_util *next;
	const char *id;
	int (*parse_qopt)(struct qdisc_util *qu, int argc, char **argv,
			  struct nlmsghdr *n, const char *dev);
	int (*print_qopt)(struct qdisc_util *qu, FILE *f, struct rtattr *opt);
	int (*print_xstats)(struct qdisc_util *qu, FILE *f,
			    struct rtattr *xstats);
	int (*parse_copt)(struct qdisc_util *qu, int argc, char **argv,
			  struct nlmsghdr *n, const char *dev);
	int (*print_copt)(struct qdisc_util *qu, FILE *f, struct rtattr *opt);
	int (*has_block)(struct qdisc_util *qu, struct rtattr *opt,
			 __u32 block_idx, bool *p_has);
};

/* include/json_print.h and include/color.h */
enum output_type {
	PRINT_FP = 1,
	PRINT_JSON = 2,
	PRINT_ANY = 4,
};

enum color_attr {
	COLOR_IFNAME,
	COLOR_MAC,
	COLOR_INET,
	COLOR_INET6,
	COLOR_OPERSTATE_UP,
	COLOR_OPERSTATE_DOWN,
	COLOR_NONE
};

int print_color_uint(enum output_type t, enum color_attr color,
		     const char *key, const char *fmt, unsigned int value);
int print_color_u64(enum output_type t, enum color_attr color,
		    const char *key, const char *fmt, __u64 value);
int print_color_string(enum output_type t, enum color_attr color,
		       const char *key, const char *fmt, const char *value);
void print_nl(void);
bool is_json_context(void);

/* tc/tc_util.h: a rate in bytes/s, printed in bits as tc does. */
void tc_print_rate(enum output_type t, const char *key, const char *fmt,
		   unsigned long long rate);

/* include/utils.h: get_time gives microseconds, get_rate64 bytes/s. */
int get_u32(__u32 *val, const char *arg, int base);
int get_rate64(__u64 *rate, const char *str);
int get_time(unsigned int *time, const char *str);

/* include/libnetlink.h */
int addattr32(struct nlmsghdr *n, int maxlen, int type, __u32 data);
int addattr64(struct nlmsghdr *n, int maxlen, int type, __u64 data);
struct rtattr *addattr_nest(struct nlmsghdr *n, int maxlen, int type);
int addattr_nest_end(struct nlmsghdr *n, struct rtattr *nest);
int parse_rtattr_flags(struct rtattr *tb[], int max, struct rtattr *rta,
		       int len, unsigned short flags);

#endif /* DMSC_TC_ABI_H */
