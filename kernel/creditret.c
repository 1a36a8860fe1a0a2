// SPDX-License-Identifier: GPL-2.0
/*
 * Credit returns (Documentation/cbfc.md, "Credit returns"): the hop that
 * forwards a session's packets tells its previous hop how many bytes it
 * freed, with a Credit-based RESV (type 29) carrying the cumulative Credit
 * object, and the previous hop applies it as DMSC_CMD_CREDIT would. A
 * delta-mode session (the draft's semantics) returns the bytes freed
 * since its last return instead, in a Credit object of the kernel's own
 * (C-Type 3): sent once, never repeated, since each copy would add again,
 * so a lost one is credit lost for good. It is there to be measured
 * against the cumulative form.
 *
 * Sending: the cbfc qdisc counts what it dequeues (dmsc_cret_account,
 * under the qdisc lock, no allocation) and puts the session once on the
 * namespace's list; a work item sends one RESV per listed session after
 * a tick, and the repeats. Once credit_batch bytes are pending the RESV
 * leaves at once, from softirq (cret_bh, queued by the dequeue, run as
 * it ends): a kworker's wake-up cost the credit loop about a millisecond
 * more under TCG, every return (Documentation/cbfc.md). Both build the
 * packet and hand it to ip6_xmit() on a control socket of the kernel's
 * own that is unhashed (it sees no incoming packet). An unchanged total
 * is sent again a few times at growing intervals, so that a lost last
 * RESV of a burst does not leave the upstream waiting for good: totals
 * are idempotent, a repeat costs the upstream a "stale" count and
 * nothing else.
 *
 * Receiving: a netfilter LOCAL_IN hook of the namespace looks at RSVP
 * over IPv6. A RESV with a cumulative Credit whose freed total is not 0,
 * or with a delta Credit, is a credit return (the speaker's set-up and
 * refresh RESVs carry 0, or the MB form): checked whole, applied to a
 * session of its form's mode, and consumed, so the speaker's
 * raw socket never sees it. Everything else passes to the speaker; a
 * RESV the kernel cannot parse is counted here and passes too, so the
 * speaker counts it by its own reason.
 */

#include <linux/ipv6.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv6.h>
#include <linux/version.h>
#if KERNEL_VERSION(6, 12, 0) <= LINUX_VERSION_CODE
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif
#include <net/addrconf.h>
#include <net/checksum.h>
#include <net/inet_common.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/xfrm.h>
#include <linux/dmsc_cbfc.h>

#include "dmsc.h"

#define CRET_MSG_MAX		128	/* our longest RESV is 124 bytes */
#define CRET_REFRESH_MS		30000	/* TIME_VALUES: RFC 2205's R */
#define CRET_REPEATS		5	/* an unchanged total is resent ... */
#define CRET_REPEAT_MS		10	/* ... after 10, 20, 40, 80, 160 ms */
#define CRET_GAP_MS		4	/* new bytes of a listed session */
#define CRET_BATCH_PARTS	16	/* returns per reservation, at least */
#define CRET_RETRY_MS		10	/* after a failed send, doubling ... */
#define CRET_RETRY_MAX_SHIFT	7	/* ... up to 1.28 s */
#define CRET_HOP_LIMIT		RSVP_HOP_LIMIT	/* sent with */
#define CRET_KEEPALIVE_MS	100	/* while held back by the next hop, */
#define CRET_KEEPALIVE_FRESH_NS	(2 * NSEC_PER_SEC)	/* ... heard from */
#define CRET_KEEPALIVE_BUDGET	64	/* keepalives per run of the work */
#define CRET_BH_BUDGET		64	/* sends per run of the softirq */

static void cret_obj(u8 *p, u16 len, u8 cls, u8 ctype)
{
	put_unaligned_be16(len, p);
	p[2] = cls;
	p[3] = ctype;
}

/*
 * The RESV, as agent/lib/rsvp.c builds it: SESSION, RSVP_HOP (IPv6: the
 * returns are IPv6 only), TIME_VALUES, QP, Credit (cumulative: @value is
 * the total; delta: the bytes), FILTER_SPEC. Returns its length.
 */
static int cret_build(u8 *buf, const struct dmsc_session *s,
		      const struct in6_addr *hop, u64 value)
{
	unsigned int alen = s->key.family == AF_INET ? 4 : 16;
	u8 ct = s->key.family == AF_INET ? RSVP_CTYPE_IPV4 : RSVP_CTYPE_IPV6;
	u8 *p = buf + RSVP_HDR_LEN;
	int len;

	memset(buf, 0, CRET_MSG_MAX);
	cret_obj(p, 8 + alen, RSVP_CLASS_SESSION, ct);
	memcpy(p + 4, &s->key.dst, alen);
	p[4 + alen] = IPPROTO_UDP;
	put_unaligned_be16(DMSC_ROCEV2_PORT, p + 6 + alen);
	p += 8 + alen;
	cret_obj(p, 24, RSVP_CLASS_RSVP_HOP, RSVP_CTYPE_IPV6);
	memcpy(p + 4, hop, 16);		/* LIH 0 */
	p += 24;
	cret_obj(p, 8, RSVP_CLASS_TIME_VALUES, 1);
	put_unaligned_be32(CRET_REFRESH_MS, p + 4);
	p += 8;
	cret_obj(p, 12, RSVP_CLASS_CBFC_QP, RSVP_CTYPE_QP);
	put_unaligned_be32(RSVP_CBFC_ENTERPRISE, p + 4);
	put_unaligned_be32(s->key.qpn, p + 8);
	p += 12;
	if (s->mode == DMSC_CREDIT_MODE_DELTA) {
		cret_obj(p, 16, RSVP_CLASS_CBFC_CREDIT, RSVP_CTYPE_CREDIT_DELTA);
		put_unaligned_be32(RSVP_CBFC_ENTERPRISE, p + 4);
		put_unaligned_be64(value, p + 8);
		p += 16;
	} else {
		cret_obj(p, 24, RSVP_CLASS_CBFC_CREDIT,
			 RSVP_CTYPE_CREDIT_CUMULATIVE);
		put_unaligned_be32(RSVP_CBFC_ENTERPRISE, p + 4);
		put_unaligned_be64(READ_ONCE(s->ret_initial), p + 8);
		put_unaligned_be64(value, p + 16);
		p += 24;
	}
	cret_obj(p, 8 + alen, RSVP_CLASS_FILTER_SPEC, ct);
	memcpy(p + 4, &s->key.src, alen);
	put_unaligned_be16(ntohs(s->key.sport), p + 6 + alen);
	p += 8 + alen;
	len = p - buf;
	buf[0] = RSVP_VERSION << 4;
	buf[1] = RSVP_MSG_CBFC_RESV;
	buf[4] = CRET_HOP_LIMIT;	/* Send_TTL: the IP hop limit */
	put_unaligned_be16(len, buf + 6);
	/* 0 says "no checksum" (RFC 2205), which receivers refuse: send
	 * its one's complement twin, as UDP does.
	 */
	*(__sum16 *)(buf + 2) = ip_compute_csum(buf, len) ?: CSUM_MANGLED_0;
	return len;
}

/*
 * The work's first run makes the socket the RESVs leave through; the
 * softirq sends use it once it is there (before, the work sends).
 */
static void cret_sock(struct dmsc_net *dn)
{
	struct sock *sk;

	if (dn->cret_sk || inet_ctl_sock_create(&sk, PF_INET6, SOCK_RAW,
						IPPROTO_RSVP, dn->net))
		return;
	/*
	 * RSVP leaves with hop limit 255, as the speakers send it, so a
	 * receiver could check it (GTSM, RFC 5082) where the hops are
	 * neighbours. Ours does not: listed hops may have plain routers
	 * between them (Documentation/cbfc.md). Set before the socket is
	 * published, never after: a plain store (a bitfield on 6.1).
	 */
	inet6_sk(sk)->hop_limit = CRET_HOP_LIMIT;
	/* pairs with the acquire in cret_send() and dmsc_cret_account() */
	smp_store_release(&dn->cret_sk, sk);
}

/*
 * One RESV with @value to the previous hop of @s. Any context (the work
 * holds @s's ret_lock with softirqs off, the softirq holds it): nothing
 * here sleeps. The source is the address the route to the previous hop
 * leaves from, which the RSVP_HOP carries.
 */
static int cret_send(struct dmsc_net *dn, struct dmsc_session *s, u64 value)
{
	/* pairs with cret_sock()'s release: the hop limit is set */
	struct sock *sk = smp_load_acquire(&dn->cret_sk);
	struct flowi6 fl6 = {
		.daddr = s->prevhop,
		.flowi6_proto = IPPROTO_RSVP,
	};
	struct dst_entry *dst;
	struct sk_buff *skb;
	int err, len, room;

	if (!sk) {
		err = -ENOMEM;	/* as the socket's allocation failed */
		goto fail;
	}
	dst = ip6_dst_lookup_flow(dn->net, sk, &fl6, NULL);
	if (IS_ERR(dst)) {
		err = PTR_ERR(dst);
		goto fail;
	}
	/* The headroom ip6_xmit() asks for, or it copies the skb. */
	room = LL_RESERVED_SPACE(dst->dev) + dst->header_len +
	       sizeof(struct ipv6hdr) + sizeof(struct hop_jumbo_hdr);
	skb = alloc_skb(room + CRET_MSG_MAX, GFP_ATOMIC);
	if (!skb) {
		dst_release(dst);
		err = -ENOBUFS;
		goto fail;
	}
	skb_reserve(skb, room);
	len = cret_build(skb_put(skb, CRET_MSG_MAX), s, &fl6.saddr, value);
	skb_trim(skb, len);
	skb_dst_set(skb, dst);
	err = ip6_xmit(sk, skb, &fl6, sk->sk_mark, NULL, 0, sk->sk_priority);
	/*
	 * As a raw socket's send has it: congestion (NET_XMIT_CN) is sent,
	 * a drop at the queue -ENOBUFS (retried in 10 ms, no back-off).
	 */
	if (err > 0)
		err = net_xmit_errno(err);
	if (err)
		goto fail;
	atomic64_inc(&dn->cret_stats[DMSC_CRET_TX]);
	atomic64_inc(&s->returns);
	return 0;

fail:
	atomic64_inc(&dn->cret_stats[DMSC_CRET_TX_ERRORS]);
	return err;
}

/*
 * Send the bytes @s has pending, unless a failed send backs off (then
 * -EBUSY, nothing sent). Under @s's ret_lock: the work's and the
 * softirq's sends of one session are never out of order.
 */
static int cret_pending(struct dmsc_net *dn, struct dmsc_session *s,
			u64 total, unsigned long now)
{
	bool delta = s->mode == DMSC_CREDIT_MODE_DELTA;
	u64 value;
	int err;

	lockdep_assert_held(&s->ret_lock);
	if (s->ret_fails && time_before(now, s->ret_next))
		return -EBUSY;
	/* A delta in range; the rest goes next round. */
	value = delta ? min_t(u64, total - s->ret_sent, DMSC_DELTA_MAX) : total;
	err = cret_send(dn, s, value);
	if (!err) {
		WRITE_ONCE(s->ret_sent, delta ? s->ret_sent + value : total);
		s->ret_fails = 0;
		/* A repeated delta would add again. */
		s->ret_repeats = delta ? 0 : CRET_REPEATS;
		s->ret_next = now + msecs_to_jiffies(CRET_REPEAT_MS);
		return 0;
	}
	/*
	 * A send that failed (no route to the previous hop, no memory) is
	 * retried after 10 ms, doubling to 1.28 s while it keeps failing:
	 * a session whose prevhop cannot be reached costs a send now and
	 * then, not one per kick of every other session. Only what a
	 * retry cannot mend backs off: a full queue or socket buffer is
	 * retried in 10 ms, as it would clear.
	 */
	s->ret_next = now + msecs_to_jiffies(CRET_RETRY_MS << s->ret_fails);
	if (err != -ENOBUFS && err != -EAGAIN && err != -ENOMEM &&
	    s->ret_fails < CRET_RETRY_MAX_SHIFT)
		s->ret_fails++;
	return err;
}

/*
 * Run the work within @delay ticks. queue_delayed_work() leaves a run
 * that is pending where it is, and the work, while sessions repeat,
 * keep alive or back off, sleeps until the earliest of theirs: up to
 * 1.28 s. A session listed meanwhile, with less than a batch to return,
 * would wait that long for its RESV, and its previous hop for credit.
 * So a later run is pulled in; an earlier one is never pushed out (a
 * listing every tick would starve the work). A work already queued (its
 * timer fired) is left alone. The timer wheel fires a long timer late
 * (by up to 32 ms for 1.28 s at HZ=250): a timer still armed past its
 * due time is pulled in by a listing or a kick, never by the work's own
 * re-arm, whose delay may be long. The lock keeps cret_due the timer's;
 * it is taken at most once a round per session, not per packet, and not
 * at all when a run is pending soon enough already: many sessions of
 * one namespace, listed from every CPU, would contend for it each tick.
 * That look is racy: a pull-in under way (its timer deleted, not yet
 * re-armed) passes for a run queued now, and may in fact be due up to
 * its own delay later (CRET_GAP_MS at most, a listing's or a kick's).
 */
static void cret_schedule(struct dmsc_net *dn, unsigned long delay)
{
	struct delayed_work *dw = &dn->cret_work;
	unsigned long due, cur;
	bool arm;

	if (delayed_work_pending(dw)) {
		cur = READ_ONCE(dn->cret_due);
		if (!timer_pending(&dw->timer) ||
		    (delay && !time_before(cur, jiffies) &&
		     !time_after(cur, jiffies + delay)))
			return;
	}
	spin_lock_bh(&dn->cret_lock);
	due = jiffies + delay;
	arm = !delayed_work_pending(dw);
	/* Now means now: a timer due this tick fires up to a tick late. */
	if (!arm && timer_pending(&dw->timer))
		arm = !delay || time_after(dn->cret_due, due) ||
		      (delay <= 1 && time_before(dn->cret_due, jiffies));
	if (arm) {
		WRITE_ONCE(dn->cret_due, due);
		mod_delayed_work(system_highpri_wq, dw, delay);
	}
	spin_unlock_bh(&dn->cret_lock);
}

/*
 * The qdisc dequeued @len bytes (credit units) of @s: count them for
 * the previous hop. Under the qdisc lock, any context; the flow holds a
 * reference on @s, the list takes its own.
 */
void dmsc_cret_account(struct dmsc_net *dn, struct dmsc_session *s,
		       unsigned int len, u32 batch, u32 initial)
{
	u64 total = atomic64_add_return(len, &s->ret_freed);

	if (READ_ONCE(s->ret_initial) != initial)
		WRITE_ONCE(s->ret_initial, initial);
	/* A plain read first: the locked bit op only once per round. */
	if (!test_bit(DMSC_RET_QUEUED, &s->ret_flags) &&
	    !test_and_set_bit(DMSC_RET_QUEUED, &s->ret_flags)) {
		/* This run is asked for: no second ask below. */
		set_bit(DMSC_RET_TICKED, &s->ret_flags);
		refcount_inc(&s->refcnt);
		llist_add(&s->ret_node, &dn->cret_list);
		cret_schedule(dn, 1);
	} else if (len && !test_bit(DMSC_RET_TICKED, &s->ret_flags) &&
		   !test_and_set_bit(DMSC_RET_TICKED, &s->ret_flags)) {
		/*
		 * Listed already, for a repeat 10 to 160 ms away (or a
		 * keepalive): new bytes must not wait for it, the previous
		 * hop's credit loop would be that much longer. A run
		 * within CRET_GAP_MS (a tick at HZ=250), asked once per
		 * session per run: at most one return per session that
		 * often below credit_batch, whatever HZ.
		 */
		cret_schedule(dn, max(1UL, msecs_to_jiffies(CRET_GAP_MS)));
	}
	/*
	 * Once per batch: the schedule takes a lock, not every packet. A
	 * batch is at most a sixteenth of the reservation (no less than the
	 * least credit_batch): bytes freed and not yet returned are credit
	 * the previous hop cannot use, so a batch near the reservation
	 * (credit_batch's default of 16384 against one BDP of a slow hop)
	 * would leave it idle for part of each round trip, waiting for the
	 * tick. Held back half a batch on average, an eighth's batch cost
	 * a reservation of one BDP 6 % of the link (Documentation/cbfc.md).
	 * No reservation, no such bound.
	 */
	if (initial)
		batch = min_t(u32, batch, max_t(u32, initial / CRET_BATCH_PARTS,
						CBFC_CREDIT_BATCH_MIN));
	if ((s64)(total - READ_ONCE(s->ret_sent)) < (s64)batch ||
	    test_and_set_bit(DMSC_RET_KICKED, &s->ret_flags))
		return;
	/*
	 * Sent as this softirq ends, not under the qdisc lock: the route
	 * to the previous hop may leave through this very qdisc. Until the
	 * work has made the socket, the work sends.
	 */
	if (!smp_load_acquire(&dn->cret_sk)) {	/* see cret_sock() */
		cret_schedule(dn, 0);
		return;
	}
	if (!test_and_set_bit(DMSC_RET_NOW, &s->ret_flags)) {
		refcount_inc(&s->refcnt);
		if (llist_add(&s->ret_now_node, &dn->cret_now))
			dmsc_bh_queue(&dn->cret_bh);
	}
}

/*
 * The sessions whose batch is full: their RESVs now, in softirq. What
 * this cannot send (backing off, a failed send, past the budget) the
 * work sends: a session with bytes pending is on its list too (every
 * account lists it, the work keeps it while anything is pending).
 */
static void cret_bh(DMSC_BH_ARG arg)
{
	struct dmsc_net *dn = dmsc_bh_from(arg, struct dmsc_net, cret_bh);
	struct llist_node *list = llist_del_all(&dn->cret_now);
	unsigned long now = jiffies, retry = 0;
	int budget = CRET_BH_BUDGET;
	bool again = false;
	struct dmsc_session *s, *tmp;

	llist_for_each_entry_safe(s, tmp, list, ret_now_node) {
		u64 total;
		int err = 0;

		/*
		 * A softirq run sends 64 at most: the rest go to the work
		 * (their KICKED stays set until it runs), which yields
		 * between sessions.
		 */
		if (budget <= 0) {
			clear_bit(DMSC_RET_NOW, &s->ret_flags);
			dmsc_session_put(s);
			retry = now;
			again = true;
			continue;
		}
		budget--;

		clear_bit(DMSC_RET_NOW, &s->ret_flags);
		/*
		 * The next full batch kicks again; one that fills while this
		 * sends finds nothing or little to send, never less than
		 * all: the total is read after the clear.
		 */
		clear_bit(DMSC_RET_KICKED, &s->ret_flags);
		/* pairs with the account's test_and_set_bit (a full one) */
		smp_mb__after_atomic();
		if (!READ_ONCE(s->dead)) {
			spin_lock(&s->ret_lock);
			total = atomic64_read(&s->ret_freed);
			if (total != s->ret_sent)
				err = cret_pending(dn, s, total, now);
			/*
			 * Backing off (-EBUSY): the work holds the retry. A
			 * send that failed: the work retries it at its time,
			 * as its own failures are.
			 */
			if (err && err != -EBUSY) {
				set_bit(DMSC_RET_TICKED, &s->ret_flags);
				if (!again || time_before(s->ret_next, retry))
					retry = s->ret_next;
				again = true;
			}
			spin_unlock(&s->ret_lock);
		}
		dmsc_session_put(s);
	}
	if (again)
		cret_schedule(dn, time_after(retry, now) ? retry - now : 0);
}

/* Send what the listed sessions have pending; keep those with repeats. */
static void cret_work(struct work_struct *work)
{
	struct dmsc_net *dn = container_of(to_delayed_work(work),
					   struct dmsc_net, cret_work);
	struct llist_node *list = llist_del_all(&dn->cret_list);
	unsigned long now = jiffies, next = 0;
	struct dmsc_session *s, *tmp;
	int budget = CRET_KEEPALIVE_BUDGET;
	bool again = false;

	cret_sock(dn);
	llist_for_each_entry_safe(s, tmp, list, ret_node) {
		bool delta = s->mode == DMSC_CREDIT_MODE_DELTA;
		unsigned long at;
		bool held, more;
		u64 total;
		int err;

		clear_bit(DMSC_RET_KICKED, &s->ret_flags);
		clear_bit(DMSC_RET_TICKED, &s->ret_flags);
		clear_bit(DMSC_RET_QUEUED, &s->ret_flags);
		/* An account from now on lists it again: nothing is missed. */
		smp_mb__after_atomic();
		if (READ_ONCE(s->dead)) {
			dmsc_session_put(s);
			continue;
		}
		spin_lock_bh(&s->ret_lock);
		total = atomic64_read(&s->ret_freed);
		if (total != s->ret_sent) {
			err = cret_pending(dn, s, total, now);
			if (err == -EBUSY) {
				/* backing off: stays listed, no kicks */
				set_bit(DMSC_RET_KICKED, &s->ret_flags);
				set_bit(DMSC_RET_TICKED, &s->ret_flags);
			} else if (err) {
				/* The retry's time, not the next bytes', decides. */
				set_bit(DMSC_RET_TICKED, &s->ret_flags);
			}
		} else if (s->ret_repeats && time_after_eq(now, s->ret_next)) {
			cret_send(dn, s, total);
			s->ret_repeats--;
			/* After the last repeat, a keepalive if held (below). */
			s->ret_next = now + msecs_to_jiffies(s->ret_repeats ?
				CRET_REPEAT_MS << (CRET_REPEATS - s->ret_repeats) :
				CRET_KEEPALIVE_MS);
		}
		/*
		 * A transit hop whose flows wait for its own next hop's credit
		 * forwards nothing, so it has nothing new to return; but the
		 * previous hop, whose packets it holds, must not take the
		 * silence for a failure (its heartbeat would fail over a live,
		 * backpressured hop). Keep repeating the unchanged total every
		 * CRET_KEEPALIVE_MS while they wait: each is a stale update
		 * upstream, which refreshes the heartbeat and nothing else. A
		 * racy look at the list: a late or early keepalive is harmless.
		 * Only while this hop hears from its own next hop (an update
		 * in the last 2 s, or a wait begun less than 2 s ago: the
		 * next hop may not have had anything to return yet) and has
		 * not failed it: a hop held by a dead next hop goes quiet, and
		 * the failure shows upstream. 2 s, not less: a next hop that
		 * is slow but alive (a shaper that sends a packet a second,
		 * whose returns and repeats then stop for most of a second)
		 * must not look dead.
		 * Not before the first bytes: a total of 0 is the speaker's
		 * set-up form, which the upstream hook passes on. Compared
		 * signed: an update stored after the clock was read is fresh,
		 * not 584 years old. Not for a delta session: it has no
		 * update that adds nothing.
		 */
		held = !delta && s->has_nexthop && !list_empty(&s->stalled) &&
		       !READ_ONCE(s->failed) && total && total == s->ret_sent &&
		       (s64)(ktime_get_ns() -
			     max_t(u64, atomic64_read(&s->last_update),
				   atomic64_read(&s->wait_start))) <
		       (s64)CRET_KEEPALIVE_FRESH_NS;
		if (held && !s->ret_repeats && time_after_eq(now, s->ret_next)) {
			/*
			 * A budget a run: 64 a tick at most, whatever the
			 * sessions a user namespace holds; the rest wait.
			 */
			if (budget > 0) {
				budget--;
				if (!cret_send(dn, s, total))
					atomic64_inc(&dn->cret_stats[DMSC_CRET_KEEPALIVE]);
				s->ret_next = now +
					msecs_to_jiffies(CRET_KEEPALIVE_MS);
			} else {
				s->ret_next = now + 1;
			}
		} else if (held && s->ret_repeats &&
			   time_after(s->ret_next,
				      now + msecs_to_jiffies(CRET_KEEPALIVE_MS))) {
			/* Held: no repeat gap longer than a keepalive's. */
			s->ret_next = now + msecs_to_jiffies(CRET_KEEPALIVE_MS);
		}
		more = s->ret_repeats || held || total != s->ret_sent;
		at = s->ret_next;
		spin_unlock_bh(&s->ret_lock);
		if (more && !test_and_set_bit(DMSC_RET_QUEUED, &s->ret_flags)) {
			/* Our reference stays with the list. */
			llist_add(&s->ret_node, &dn->cret_list);
			if (!again || time_before(at, next))
				next = at;
			again = true;
			cond_resched();
			continue;
		}
		dmsc_session_put(s);
		/* Up to 65536 sessions a namespace: yield between them. */
		cond_resched();
	}
	/* The walk may have taken ticks: count from its end. */
	now = jiffies;
	if (again)
		cret_schedule(dn, time_after(next, now) ? next - now : 1);
}

/* What a credit return carries, from the kernel's parse. */
struct cret_msg {
	struct dmsc_cbfc_key key;
	u64 freed;			/* cumulative: the total */
	u64 delta;			/* delta: the bytes */
};

static bool cret_addr(u8 ctype, u16 olen, u8 *family)
{
	if (ctype == RSVP_CTYPE_IPV4 && olen == 12)
		*family = AF_INET;
	else if (ctype == RSVP_CTYPE_IPV6 && olen == 24)
		*family = AF_INET6;
	else
		return false;
	return true;
}

/*
 * Parse the RESV in @buf (@len bytes, the IPv6 payload) as strictly as
 * agent/lib/rsvp.c does for a RESV: false when anything is wrong.
 */
static bool cret_parse(const u8 *buf, unsigned int len, struct cret_msg *m)
{
	const unsigned int need = BIT(RSVP_CLASS_SESSION) |
		BIT(RSVP_CLASS_RSVP_HOP) | BIT(RSVP_CLASS_TIME_VALUES) |
		BIT(RSVP_CLASS_FILTER_SPEC) | BIT(24) | BIT(25);
	unsigned int off = RSVP_HDR_LEN, seen = 0;
	u8 sfam = 0, ffam = 0, hfam;

	memset(m, 0, sizeof(*m));
	if (len < RSVP_HDR_LEN || buf[0] >> 4 != RSVP_VERSION ||
	    get_unaligned_be16(buf + 6) != len ||
	    !get_unaligned_be16(buf + 2) || ip_compute_csum(buf, len))
		return false;
	while (off < len) {
		const u8 *o = buf + off;
		unsigned int bit;
		u16 olen;

		if (len - off < RSVP_OBJ_HDR_LEN)
			return false;
		olen = get_unaligned_be16(o);
		if (olen < RSVP_OBJ_HDR_LEN || olen % 4 || olen > len - off)
			return false;
		switch (o[2]) {
		case RSVP_CLASS_SESSION:
			if (!cret_addr(o[3], olen, &sfam))
				return false;
			m->key.family = sfam;
			memcpy(&m->key.dst, o + 4, olen - 8);
			if (o[olen - 4] != IPPROTO_UDP || o[olen - 3] ||
			    get_unaligned_be16(o + olen - 2) != DMSC_ROCEV2_PORT)
				return false;
			bit = BIT(RSVP_CLASS_SESSION);
			break;
		case RSVP_CLASS_RSVP_HOP:
			if (!cret_addr(o[3], olen, &hfam))
				return false;
			bit = BIT(RSVP_CLASS_RSVP_HOP);
			break;
		case RSVP_CLASS_TIME_VALUES:
			if (o[3] != 1 || olen != 8 || !get_unaligned_be32(o + 4))
				return false;
			bit = BIT(RSVP_CLASS_TIME_VALUES);
			break;
		case RSVP_CLASS_FILTER_SPEC:
			if (!cret_addr(o[3], olen, &ffam))
				return false;
			memcpy(&m->key.src, o + 4, olen - 8);
			if (get_unaligned_be16(o + olen - 4))
				return false;
			m->key.sport = htons(get_unaligned_be16(o + olen - 2));
			bit = BIT(RSVP_CLASS_FILTER_SPEC);
			break;
		case RSVP_CLASS_CBFC_QP:
			if (o[3] != RSVP_CTYPE_QP || olen != 12 ||
			    get_unaligned_be32(o + 4) != RSVP_CBFC_ENTERPRISE ||
			    get_unaligned_be32(o + 8) > DMSC_QPN_MAX)
				return false;
			m->key.qpn = get_unaligned_be32(o + 8);
			bit = BIT(25);
			break;
		case RSVP_CLASS_CBFC_CREDIT:
			if (olen < 8 ||
			    get_unaligned_be32(o + 4) != RSVP_CBFC_ENTERPRISE)
				return false;
			if (o[3] == RSVP_CTYPE_CREDIT_CUMULATIVE && olen == 24) {
				m->freed = get_unaligned_be64(o + 16);
				/* freed: any u64, compared wrap-safely. */
				if (get_unaligned_be64(o + 8) > DMSC_CREDIT_MAX)
					return false;
			} else if (o[3] == RSVP_CTYPE_CREDIT_DELTA &&
				   olen == 16) {
				m->delta = get_unaligned_be64(o + 8);
				if (!m->delta || m->delta > DMSC_DELTA_MAX)
					return false;
			} else if (o[3] != RSVP_CTYPE_CREDIT_MB || olen != 12) {
				return false;
			}
			bit = BIT(24);
			break;
		default:
			/* 10bbbbbb and 11bbbbbb are skipped, as RFC 2205 says. */
			if (!(o[2] & 0x80))
				return false;
			bit = 0;
			break;
		}
		if (seen & bit)
			return false;	/* an object twice */
		seen |= bit;
		off += olen;
	}
	return (seen & need) == need && sfam == ffam;
}

/* RSVP over IPv6 arriving for this node. */
static unsigned int cret_hook(void *priv, struct sk_buff *skb,
			      const struct nf_hook_state *state)
{
	const struct ipv6hdr *ip6h = ipv6_hdr(skb);
	struct dmsc_net *dn = dmsc_pernet(state->net);
	unsigned int off, len;
	struct dmsc_session *s;
	u8 buf[CRET_MSG_MAX];
	struct cret_msg m;
	u8 _type, *type;
	bool on_backup = false;
	int why = -1;

	if (ip6h->nexthdr != IPPROTO_RSVP)
		return NF_ACCEPT;
	off = skb_network_offset(skb) + sizeof(*ip6h);
	len = ntohs(ip6h->payload_len);
	type = skb_header_pointer(skb, off + 1, 1, &_type);
	/* Not a RESV, or longer than any credit return: the speaker's. */
	if (!type || *type != RSVP_MSG_CBFC_RESV || len > CRET_MSG_MAX)
		return NF_ACCEPT;
	if (len > skb->len - off || skb_copy_bits(skb, off, buf, len) ||
	    !cret_parse(buf, len, &m)) {
		atomic64_inc(&dn->cret_stats[DMSC_CRET_MALFORMED]);
		return NF_ACCEPT;
	}
	/* Set-up or refresh: a total of 0, or the draft's MB form. */
	if (!m.freed && !m.delta)
		return NF_ACCEPT;
	/*
	 * This hook runs before the inbound IPsec policy check that raw
	 * delivery makes: apply the policy here, so cleartext an operator's
	 * policy refuses is not taken as credit; dropped as raw delivery
	 * would, counted as not from the next hop. The check may move the
	 * head (it pulls to decode the session): read the header again.
	 */
	if (!xfrm6_policy_check(NULL, XFRM_POLICY_IN, skb)) {
		atomic64_inc(&dn->cret_stats[DMSC_CRET_SOURCE]);
		return NF_DROP;
	}
	ip6h = ipv6_hdr(skb);

	rcu_read_lock();
	s = dmsc_session_lookup(dn, &m.key);
	if (s && !READ_ONCE(s->dead))
		/* pairs with dmsc_session_fail()'s release of on_backup */
		on_backup = smp_load_acquire(&s->on_backup);
	if (!s || READ_ONCE(s->dead))
		why = DMSC_CRET_NO_SESSION;
	/* Only the next hop grants credit: the backup's once moved. */
	else if (!s->has_nexthop ||
		 !ipv6_addr_equal(&ip6h->saddr, on_backup ?
				  &s->backup_nexthop : &s->nexthop))
		why = DMSC_CRET_SOURCE;
	/* Each form to the granting hop's mode, as DMSC_CMD_CREDIT has it. */
	else if (dmsc_session_nh_delta(s, on_backup) != !!m.delta)
		why = DMSC_CRET_MODE;
	if (why < 0) {
		/* As DMSC_CMD_CREDIT: any update says the next hop lives. */
		atomic64_set(&s->last_update, ktime_get_ns());
		if (dmsc_session_credit(s, m.delta != 0, m.delta ?: m.freed,
					on_backup))
			dmsc_cbfc_wake(s);
		why = DMSC_CRET_RX;
	}
	rcu_read_unlock();
	atomic64_inc(&dn->cret_stats[why]);
	consume_skb(skb);
	return NF_STOLEN;
}

/* After the operator's filter table: a firewall may drop RSVP first. */
static const struct nf_hook_ops cret_nf_ops = {
	.hook = cret_hook,
	.pf = NFPROTO_IPV6,
	.hooknum = NF_INET_LOCAL_IN,
	.priority = NF_IP6_PRI_FILTER + 1,
};

void dmsc_cret_net_init(struct dmsc_net *dn)
{
	init_llist_head(&dn->cret_list);
	INIT_DELAYED_WORK(&dn->cret_work, cret_work);
	spin_lock_init(&dn->cret_lock);
	init_llist_head(&dn->cret_now);
	dmsc_bh_init(&dn->cret_bh, cret_bh);
}

/*
 * A namespace's local IPv6 pays for the hook only once it has a session
 * that takes returns (one with a next hop): it comes with
 * the first and stays until the namespace goes, as the steering hooks.
 */
int dmsc_cret_hook(struct dmsc_net *dn, struct netlink_ext_ack *extack)
{
	int err;

	lockdep_assert_held(&dn->lock);
	if (dn->cret_hooked)
		return 0;
	err = nf_register_net_hook(dn->net, &cret_nf_ops);
	if (err) {
		NL_SET_ERR_MSG(extack,
			       "cannot register the credit-return netfilter hook");
		return err;
	}
	dn->cret_hooked = true;
	return 0;
}

void dmsc_cret_net_pre_exit(struct dmsc_net *dn)
{
	if (dn->cret_hooked)
		nf_unregister_net_hook(dn->net, &cret_nf_ops);
	dn->cret_hooked = false;
}

/*
 * The namespace's qdiscs are gone (its devices went first): nothing can
 * list a session again once the work is cancelled.
 */
void dmsc_cret_net_exit(struct dmsc_net *dn)
{
	struct llist_node *list;
	struct dmsc_session *s, *tmp;

	/* The softirq's sends queue the work, never the other way round. */
	dmsc_bh_cancel(&dn->cret_bh);
	list = llist_del_all(&dn->cret_now);
	llist_for_each_entry_safe(s, tmp, list, ret_now_node) {
		clear_bit(DMSC_RET_NOW, &s->ret_flags);
		dmsc_session_put(s);
	}
	cancel_delayed_work_sync(&dn->cret_work);
	list = llist_del_all(&dn->cret_list);
	llist_for_each_entry_safe(s, tmp, list, ret_node) {
		clear_bit(DMSC_RET_QUEUED, &s->ret_flags);
		dmsc_session_put(s);
	}
	if (dn->cret_sk)
		inet_ctl_sock_destroy(dn->cret_sk);
	dn->cret_sk = NULL;
}
