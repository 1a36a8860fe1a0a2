/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tunnels and rules of msg_policy.h to and from the dmsc module, over
 * nl.h (the messages and the talk the CLI's tunnel and rule commands
 * use). Each returns 0 or a negative errno, with the kernel's extack
 * message in nl->errmsg.
 */
#ifndef DMSC_NL_POLICY_H
#define DMSC_NL_POLICY_H

#include <stddef.h>

#include "msg_policy.h"
#include "msg_qos.h"
#include "nl.h"

/* DMSC_CMD_TUNNEL_NEW or _SET of @p's tunnel: id, src, paths, backup. */
int dmsc_nl_tunnel_put(struct dmsc_nl *nl, int cmd, const struct policy *p);
int dmsc_nl_tunnel_del(struct dmsc_nl *nl, uint32_t id);
/* Every tunnel of this namespace, as policies without name or rules. */
int dmsc_nl_tunnel_dump(struct dmsc_nl *nl, struct policy **out, size_t *n);

/*
 * The counters of every tunnel of this namespace (type 5's "tunnels",
 * msg_qos.h), from the same dump. dmsc_nl_tunnel_counters_parse() is the
 * parser of one answer, for the unit tests too.
 */
int dmsc_nl_tunnel_counters(struct dmsc_nl *nl, struct qos_tunnel **out,
			    size_t *n);
/* 1 if @top is a tunnel the module made (it has paths), into @t; else 0 */
int dmsc_nl_tunnel_counters_parse(struct nlattr **top, struct qos_tunnel *t);

int dmsc_nl_rule_add(struct dmsc_nl *nl, const struct pol_rule *r);
int dmsc_nl_rule_del(struct dmsc_nl *nl, const struct pol_rule *r);
int dmsc_nl_rule_dump(struct dmsc_nl *nl, struct pol_rule **out, size_t *n);

#endif /* DMSC_NL_POLICY_H */
