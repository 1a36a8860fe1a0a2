// SPDX-License-Identifier: GPL-2.0
/*
 * dmsc.ko: module and per-namespace life cycle. Each network namespace
 * gets its own struct dmsc_net; the generic netlink family is registered
 * once and finds the namespace of every request.
 */

#include <linux/module.h>
#include <linux/init.h>
#include <linux/netdevice.h>
#include <linux/random.h>

#include "dmsc.h"
#include "version.h"

unsigned int dmsc_net_id __read_mostly;

void dmsc_stats_read(struct dmsc_net *dn, struct dmsc_stats *out)
{
	int cpu;

	memset(out, 0, sizeof(*out));
	for_each_possible_cpu(cpu) {
		const struct dmsc_pcpu_stats *s = per_cpu_ptr(dn->stats, cpu);
		struct dmsc_stats snap;
		unsigned int start;

		do {
			start = u64_stats_fetch_begin(&s->syncp);
			snap.roce_packets = u64_stats_read(&s->roce_packets);
			snap.encap_packets = u64_stats_read(&s->encap_packets);
			snap.encap_bytes = u64_stats_read(&s->encap_bytes);
			snap.drop_mtu = u64_stats_read(&s->drop_mtu);
			snap.drop_noroute = u64_stats_read(&s->drop_noroute);
			snap.drop_nomem = u64_stats_read(&s->drop_nomem);
			snap.malformed = u64_stats_read(&s->malformed);
			snap.flows_untracked = u64_stats_read(&s->flows_untracked);
		} while (u64_stats_fetch_retry(&s->syncp, start));

		out->roce_packets += snap.roce_packets;
		out->encap_packets += snap.encap_packets;
		out->encap_bytes += snap.encap_bytes;
		out->drop_mtu += snap.drop_mtu;
		out->drop_noroute += snap.drop_noroute;
		out->drop_nomem += snap.drop_nomem;
		out->malformed += snap.malformed;
		out->flows_untracked += snap.flows_untracked;
	}
}

static int __net_init dmsc_net_init(struct net *net)
{
	struct dmsc_net *dn = dmsc_pernet(net);
	int err;

	dn->net = net;
	mutex_init(&dn->lock);
	dn->gen = 1;
	dn->flow_limit = DMSC_FLOW_LIMIT_DEFAULT;
	dn->flow_timeout_ms = DMSC_FLOW_TIMEOUT_DEFAULT;
	get_random_bytes(&dn->hash_key, sizeof(dn->hash_key));
	dn->stats = netdev_alloc_pcpu_stats(struct dmsc_pcpu_stats);
	if (!dn->stats)
		return -ENOMEM;
	dmsc_tunnel_net_init(dn);
	dmsc_rule_net_init(dn);
	err = dmsc_flow_net_init(dn);
	if (err)
		goto err_stats;
	err = dmsc_credit_net_init(dn);
	if (err)
		goto err_flow;
	/*
	 * The steering hooks come with the first rule (steer.c), the credit
	 * returns' LOCAL_IN hook with the first session that takes returns
	 * (creditret.c).
	 */
	dmsc_cret_net_init(dn);
	return 0;

err_flow:
	dmsc_flow_net_exit(dn);
err_stats:
	free_percpu(dn->stats);
	mutex_destroy(&dn->lock);
	return err;
}

/*
 * Unhook first; the namespace core then waits for a grace period before
 * calling dmsc_net_exit(), so no packet is still using what it frees.
 */
static void __net_exit dmsc_net_pre_exit(struct net *net)
{
	dmsc_steer_net_exit(dmsc_pernet(net));
	dmsc_cret_net_pre_exit(dmsc_pernet(net));
}

static void __net_exit dmsc_net_exit(struct net *net)
{
	struct dmsc_net *dn = dmsc_pernet(net);

	/* The work holds sessions: it goes first. */
	dmsc_cret_net_exit(dn);
	dmsc_credit_net_exit(dn);
	/* Flows hold tunnels and rules point at them: free in this order. */
	dmsc_flow_net_exit(dn);
	dmsc_rule_net_exit(dn);
	dmsc_tunnel_net_exit(dn);
	free_percpu(dn->stats);
	mutex_destroy(&dn->lock);
}

static struct pernet_operations dmsc_net_ops = {
	.init = dmsc_net_init,
	.pre_exit = dmsc_net_pre_exit,
	.exit = dmsc_net_exit,
	.id = &dmsc_net_id,
	.size = sizeof(struct dmsc_net),
};

static int __init dmsc_init(void)
{
	int err;

	err = dmsc_flow_cache_init();
	if (err)
		return err;
	err = dmsc_rule_cache_init();
	if (err)
		goto err_flow_cache;
	err = register_pernet_subsys(&dmsc_net_ops);
	if (err)
		goto err_cache;
	err = dmsc_genl_init();
	if (err)
		goto err_pernet;
	err = dmsc_cbfc_init();
	if (err)
		goto err_genl;
	pr_info("dmsc " DMSC_VERSION " loaded\n");
	return 0;

err_genl:
	dmsc_genl_exit();
err_pernet:
	unregister_pernet_subsys(&dmsc_net_ops);
err_cache:
	dmsc_rule_cache_exit();
err_flow_cache:
	dmsc_flow_cache_exit();
	return err;
}

static void __exit dmsc_exit(void)
{
	/* Refused by the core while a cbfc qdisc exists: none is left. */
	dmsc_cbfc_exit();
	/* No request can reach a namespace once the family is gone. */
	dmsc_genl_exit();
	unregister_pernet_subsys(&dmsc_net_ops);
	/*
	 * Objects freed by call_rcu() run our code. A flow's callback drops
	 * its tunnel's reference and may queue the tunnel's own: the second
	 * barrier waits for those.
	 */
	rcu_barrier();
	rcu_barrier();
	dmsc_extack_bufs_free();
	dmsc_rule_cache_exit();
	dmsc_flow_cache_exit();
}

module_init(dmsc_init);
module_exit(dmsc_exit);
MODULE_LICENSE("GPL");
MODULE_VERSION(DMSC_VERSION);
MODULE_DESCRIPTION("SRv6 steering and credit-based flow control for RoCEv2");
MODULE_AUTHOR("dmsc developers");
MODULE_ALIAS_GENL_FAMILY(DMSC_GENL_NAME);
/*
 * The kernel asks for the qdisc kind's module by this name (6.12's
 * request_qdisc_module), older tools for sch_cbfc.
 */
MODULE_ALIAS("net-sch-cbfc");
MODULE_ALIAS("sch_cbfc");
