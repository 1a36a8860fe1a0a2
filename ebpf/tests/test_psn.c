// SPDX-License-Identifier: GPL-2.0
/*
 * The tc program's PSN accounting against roce-gen sink's own
 * (tools/roce-gen/psn_window.c), packet by packet: the program runs on
 * crafted RoCEv2 frames through BPF_PROG_TEST_RUN, the sink's window on
 * the same PSNs, and after every packet the QP's lost, out-of-order,
 * duplicate, too-old counts and next PSN must be equal. Random streams
 * of in-order, skipped, late and repeated PSNs, with gaps beyond the
 * program's window and the 24-bit wrap. Needs root (BPF); KTAP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bth.h"
#include "frame.h"
#include "psn_window.h"
#include "roce_telemetry.h"
#include "roce_telemetry.skel.h"

static int n_test, n_fail;

static void ktap(int ok, const char *name)
{
	n_test++;
	if (!ok)
		n_fail++;
	printf("%sok %d %s\n", ok ? "" : "not ", n_test, name);
}

static int run(int prog, unsigned char *b, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = b, .data_size_in = (__u32)len,
		    .repeat = 1);
	int err = bpf_prog_test_run_opts(prog, &o);

	return err ? err : (int)o.retval;
}

/* Per second, from an average (x 2^RT_RATE_FRAC) over the average ns. */
static double rt_rate(__u64 avg, __u64 avg_ns)
{
	return avg_ns ? (double)avg / (1 << RT_RATE_FRAC) * 1e9 / (double)avg_ns : 0;
}

/*
 * The QP's slot, as the program finds it: among RT_QP_PROBES from where
 * its key hashes to (the seed is 0 here), read under its lock.
 */
static int qp_get(int map, unsigned int qpn, struct rt_qp *q)
{
	struct rt_qp_key k;
	__u32 h;

	memset(&k, 0, sizeof(k));
	k.ifindex = 1;			/* test runs see the loopback device */
	k.dir = RT_INGRESS;
	k.family = 2;
	k.sport = 49152;
	k.dqpn = qpn;
	memcpy(k.src, "\x0a\x00\x00\x01", 4);
	memcpy(k.dst, "\x0a\x00\x00\x02", 4);
	h = rt_qp_hash(&k, 0);
	for (__u32 i = 0; i < RT_QP_PROBES; i++) {
		__u32 idx = (h + i) & (RT_QP_SLOTS - 1);

		if (bpf_map_lookup_elem_flags(map, &idx, q, BPF_F_LOCK))
			return -1;
		if (!memcmp(&q->key, &k, sizeof(k)))
			return 0;
	}
	return -1;
}

/* QPs held: slots in use. */
static unsigned int qps_held(int map)
{
	unsigned int n = 0;
	struct rt_qp q;

	for (__u32 i = 0; i < RT_QP_SLOTS; i++)
		if (!bpf_map_lookup_elem_flags(map, &i, &q, BPF_F_LOCK) &&
		    q.key.ifindex)
			n++;
	return n;
}

/*
 * PSN @p of QP @qpn to the program and to the sink's window @w, the
 * @sent-th packet: the QP's counts must then be the sink's.
 */
static int feed(int prog, int qps, unsigned int qpn, struct psn_window *w,
		unsigned int p, unsigned int sent, char *why, size_t whylen)
{
	unsigned char b[256];
	struct rt_qp q;

	psn_window_add(w, p);
	if (run(prog, b, frame(b, 0x04, 0, qpn, p, 16)) != -1) {
		snprintf(why, whylen, "packet %u: program returned other than TC_ACT_UNSPEC", sent);
		return -1;
	}
	if (qp_get(qps, qpn, &q)) {
		snprintf(why, whylen, "packet %u: no QP entry", sent);
		return -1;
	}
	if (q.lost != w->missing || q.out_of_order != w->late ||
	    q.duplicates != w->dups || q.too_old != w->too_old ||
	    q.next_psn != w->next || q.packets != sent) {
		snprintf(why, whylen,
			 "packet %u psn %u: program lost %llu ooo %llu dup %llu old %llu next %u pk %llu; sink %llu %llu %llu %llu %u %u",
			 sent, p, (unsigned long long)q.lost,
			 (unsigned long long)q.out_of_order,
			 (unsigned long long)q.duplicates,
			 (unsigned long long)q.too_old, q.next_psn,
			 (unsigned long long)q.packets,
			 (unsigned long long)w->missing,
			 (unsigned long long)w->late,
			 (unsigned long long)w->dups,
			 (unsigned long long)w->too_old, w->next, sent);
		return -1;
	}
	return 0;
}

/*
 * One random stream on QP @qpn from @first: mostly in order, some PSNs
 * held back and sent up to 1500 later (within the program's window),
 * some sent twice, some dropped, now and then a jump of 3000..200000.
 */
static int stream(int prog, int qps, unsigned int qpn, unsigned int first,
		  int packets, unsigned int seed, char *why, size_t whylen)
{
	unsigned int held[64], nheld = 0, psn = first, sent = 0;
	struct psn_window w;
	int rc = 0;

	srand(seed);
	psn_window_init(&w, false, 0);
	for (int i = 0; i < packets && !rc; i++) {
		unsigned int r = (unsigned int)rand() % 1000, p;

		if (r < 30 && nheld < 64) {		/* hold back */
			held[nheld++] = psn;
			psn = (psn + 1) & RT_PSN_MASK;
			continue;
		}
		if (r < 60 && nheld) {			/* a held one, late */
			unsigned int j = (unsigned int)rand() % nheld;

			p = held[j];
			held[j] = held[--nheld];
			if ((uint32_t)psn_diff(psn, p) > 1500)
				continue;		/* too old to be fair: drop it */
		} else if (r < 80) {			/* lost */
			psn = (psn + 1) & RT_PSN_MASK;
			continue;
		} else if (r < 100 && sent) {		/* repeat a recent one */
			p = (psn - 1 - (unsigned int)rand() % 200) & RT_PSN_MASK;
		} else if (r < 101 && sent) {		/* older than either window */
			p = (psn - 70000 - (unsigned int)rand() % 1000) & RT_PSN_MASK;
		} else if (r < 102) {			/* a big jump */
			psn = (psn + 3000 + (unsigned int)rand() % 200000) & RT_PSN_MASK;
			nheld = 0;
			continue;
		} else {
			p = psn;
			psn = (psn + 1) & RT_PSN_MASK;
		}
		rc = feed(prog, qps, qpn, &w, p, ++sent, why, whylen);
	}
	if (!rc)
		snprintf(why, whylen, "%u packets: lost %llu ooo %llu dup %llu too_old %llu",
			 sent, (unsigned long long)w.missing,
			 (unsigned long long)w.late, (unsigned long long)w.dups,
			 (unsigned long long)w.too_old);
	psn_window_free(&w);
	return rc;
}

/*
 * The program marks missing PSNs and leaves the bitmap alone while
 * packets come in order, except for the window after a loss, when the
 * slots of the PSNs it marked must be cleared as new PSNs take them.
 * Each phase here ends where a stale mark would show: 5 lost, then
 * in order well past a window, then every PSN of the window again
 * (all duplicates to the sink); 10 lost and half a window in order,
 * the 10 late, then all of the window again; 3 lost right at the end.
 */
static int after_loss(int prog, int qps, unsigned int qpn, char *why,
		      size_t whylen)
{
	static const struct { int skip, in_order, late, replay; } ph[] = {
		{ 0, 100, 0, 0 },
		{ 5, RT_PSN_WINDOW + 50, 0, RT_PSN_WINDOW },
		{ 10, RT_PSN_WINDOW / 2, 10, RT_PSN_WINDOW },
		{ 3, 1, 0, RT_PSN_WINDOW },
	};
	unsigned int psn = 0, sent = 0;
	struct psn_window w;
	int rc = 0;

	psn_window_init(&w, false, 0);
	for (unsigned int i = 0; i < sizeof(ph) / sizeof(*ph) && !rc; i++) {
		unsigned int gap = psn;

		psn += ph[i].skip;
		for (int k = 0; k < ph[i].in_order && !rc; k++)
			rc = feed(prog, qps, qpn, &w, psn++, ++sent, why, whylen);
		for (int k = 0; k < ph[i].late && !rc; k++)
			rc = feed(prog, qps, qpn, &w, gap + k, ++sent, why, whylen);
		for (int k = ph[i].replay; k > 0 && !rc; k--)
			rc = feed(prog, qps, qpn, &w, psn - k, ++sent, why, whylen);
	}
	if (!rc)
		snprintf(why, whylen, "%u packets: lost %llu ooo %llu dup %llu",
			 sent, (unsigned long long)w.missing,
			 (unsigned long long)w.late, (unsigned long long)w.dups);
	psn_window_free(&w);
	return rc;
}

int main(void)
{
	struct roce_telemetry_bpf *skel;
	__u32 dk = 0;		/* test runs have classid 0: slot 0 */
	int ncpu = libbpf_num_possible_cpus(), prog, qps;
	struct rt_dev *dev;
	unsigned char b[256];
	char why[512], name[600];

	printf("TAP version 13\n");
	libbpf_set_print(NULL);
	skel = roce_telemetry_bpf__open_and_load();
	if (!skel) {
		printf("1..0 # SKIP cannot load BPF here: %s\n", strerror(errno));
		return 0;
	}
	printf("1..14\n");
	prog = bpf_program__fd(skel->progs.rt_ingress);
	qps = bpf_map__fd(skel->maps.rt_qps);
	dev = calloc((size_t)ncpu, sizeof(*dev));
	bpf_map_update_elem(bpf_map__fd(skel->maps.rt_devs), &dk, dev, BPF_ANY);

	/* Streams: from 0, across the wrap, from the top, long. */
	static const struct { unsigned int first, seed; int n; } s[] = {
		{ 0, 1, 20000 }, { 0xffff00, 2, 20000 }, { 0xfffff0, 3, 5000 },
		{ 12345, 4, 100000 },
	};
	for (unsigned int i = 0; i < sizeof(s) / sizeof(*s); i++) {
		int rc = stream(prog, qps, 100 + i, s[i].first, s[i].n, s[i].seed,
				why, sizeof(why));

		snprintf(name, sizeof(name), "PSN accounting equals the sink's from %#x: %s",
			 s[i].first, why);
		ktap(!rc, name);
	}

	{
		int rc = after_loss(prog, qps, 110, why, sizeof(why));

		snprintf(name, sizeof(name),
			 "in order after a loss, replayed windows equal the sink's: %s", why);
		ktap(!rc, name);
	}

	/*
	 * Headers past what the program reads in place (an SRH of 70 SIDs
	 * puts the inner IPv4 header at byte 1182) are read through
	 * bpf_skb_load_bytes() instead, as paged data would be: counted
	 * the same, here with one PSN skipped.
	 */
	{
		static unsigned char big[2048];
		struct rt_qp qb = { 0 };
		int bad = 0;

		for (unsigned int i = 0; i < 20; i++)
			if (run(prog, big, frame_srv6_sids(big, 0x04, 120, i + (i >= 10), 16, 70)) != -1)
				bad = 1;
		bad |= qp_get(qps, 120, &qb);
		snprintf(name, sizeof(name),
			 "inner headers at byte 1182: %llu packets, %llu SRv6, lost %llu, next %u",
			 (unsigned long long)qb.packets, (unsigned long long)qb.srv6_packets,
			 (unsigned long long)qb.lost, qb.next_psn);
		ktap(!bad && qb.packets == 20 && qb.srv6_packets == 20 && qb.lost == 1 &&
		     qb.next_psn == 21 && qb.bytes == 20 * (12 + 16 + 4), name);
	}

	/* Malformed: counted per kind, no QP made. */
	struct rt_qp q;
	unsigned long long shrt = 0, ver = 0;

	run(prog, b, frame(b, 0x04, 1, 900, 1, 16));		/* version 1 */
	run(prog, b, frame(b, 0x0a, 0, 901, 1, 4));		/* no room for RETH */
	run(prog, b, frame(b, 0x04, 0, 902, 1, 0) - 1);	/* UDP length past the end */
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.rt_devs), &dk, dev);
	for (int c = 0; c < ncpu; c++) {
		shrt += dev[c].c[RT_DEV_SHORT];
		ver += dev[c].c[RT_DEV_BAD_VERSION];
	}
	ktap(ver == 1 && shrt == 2, "malformed: 1 bad version, 2 short");
	ktap(qp_get(qps, 900, &q) && qp_get(qps, 901, &q) && qp_get(qps, 902, &q),
	     "malformed: no QP entries");
	/* A well-formed write-only (RETH) does count. */
	run(prog, b, frame(b, 0x0a, 0, 903, 7, 16));
	ktap(!qp_get(qps, 903, &q) && q.packets == 1 && q.ops[RT_OP_WRITE] == 1,
	     "RC write only with its RETH counts as a write");

	/*
	 * The rate estimate: 10 packets every 5 ms for 2.5 s. The averages
	 * of a window's bytes, packets and length (gain 1/8 per 100 ms
	 * window), divided as the readers do (rt_rate()), must be within 15%
	 * of the rate the packets were actually sent at, bytes and packets;
	 * then, after more than RT_RATE_STALE idle windows, one packet must
	 * reset them, not leave the old rate standing.
	 */
	struct timespec t0, t1, nap = { 0, 5000000 };
	unsigned int sent = 0;
	double want, got, gotB;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 10; i++, sent++)
			run(prog, b, frame(b, 0x04, 0, 950, sent, 16));
		nanosleep(&nap, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while ((t1.tv_sec - t0.tv_sec) * 1000000000ll + t1.tv_nsec - t0.tv_nsec <
		 2500000000ll);
	want = sent / ((double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	qp_get(qps, 950, &q);
	got = rt_rate(q.avg_packets, q.avg_ns);
	gotB = rt_rate(q.avg_bytes, q.avg_ns);
	snprintf(name, sizeof(name),
		 "rate estimate %.0f pps, %.0f B/s; sent at %.0f pps of 32 B",
		 got, gotB, want);
	ktap(got > 0.85 * want && got < 1.15 * want &&
	     gotB > 0.85 * 32 * want && gotB < 1.15 * 32 * want, name);
	nap.tv_sec = 1;
	nap.tv_nsec = 0;
	nanosleep(&nap, NULL);
	run(prog, b, frame(b, 0x04, 0, 950, sent, 16));
	qp_get(qps, 950, &q);
	snprintf(name, sizeof(name),
		 "after 1 s idle the estimate restarts: %.1f pps, was %.0f",
		 rt_rate(q.avg_packets, q.avg_ns), got);
	ktap(rt_rate(q.avg_packets, q.avg_ns) < 0.1 * got, name);

	/* Fill the QP map: what does not fit is counted, nothing else breaks. */
	unsigned int have = qps_held(qps), extra = 100, ok = 1;
	unsigned long long over = 0;

	for (unsigned int i = 0; i < RT_MAX_QPS - have + extra; i++)
		if (run(prog, b, frame(b, 0x04, 0, 20000 + i, 0, 16)) != -1)
			ok = 0;
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.rt_devs), &dk, dev);
	for (int c = 0; c < ncpu; c++)
		over += dev[c].c[RT_DEV_QP_OVERFLOW];
	snprintf(name, sizeof(name), "a full QP map: %llu packets counted as qp_overflow, want %u",
		 over, extra);
	ktap(ok && over == extra && !qp_get(qps, 20000, &q) && q.packets == 1 &&
	     qp_get(qps, 20000 + RT_MAX_QPS - have, &q), name);

	/*
	 * Free a slot as dmsc does at a detach (a zeroed slot written under
	 * its lock, the freed count raised): a QP further along a probe run
	 * through it is still found there, not made again in the freed slot,
	 * and one new QP fits again, the next does not.
	 */
	{
		static const struct rt_qp zero;
		int cnt = bpf_map__fd(skel->maps.rt_qp_count);
		__u32 kf = RT_COUNT_FREED, home = 0, at = 0;
		unsigned long long over2 = 0;
		unsigned int qpn = 0, copies = 0;
		struct rt_qp s;
		__u64 freed = 0;

		unsigned int far = 0, far_at = 0;

		/* qpn: one slot from its first; far: three or more (qp_claim() finds it). */
		for (unsigned int i = 0; i < RT_MAX_QPS - have && (!qpn || !far); i++) {
			struct rt_qp_key k;
			__u32 h0;

			if (qp_get(qps, 20000 + i, &q))
				continue;
			k = q.key;
			h0 = rt_qp_hash(&k, 0) & (RT_QP_SLOTS - 1);
			for (at = h0; at != ((h0 + RT_QP_PROBES) & (RT_QP_SLOTS - 1));
			     at = (at + 1) & (RT_QP_SLOTS - 1)) {
				if (bpf_map_lookup_elem_flags(qps, &at, &s, BPF_F_LOCK))
					break;
				if (!memcmp(&s.key, &k, sizeof(k)))
					break;
			}
			if (!qpn && ((at - h0) & (RT_QP_SLOTS - 1)) == 1) {
				qpn = 20000 + i;
				home = h0;
			} else if (!far && ((at - h0) & (RT_QP_SLOTS - 1)) >= 3) {
				far = 20000 + i;
				far_at = (at - h0) & (RT_QP_SLOTS - 1);
			}
		}
		at = (home + 1) & (RT_QP_SLOTS - 1);
		run(prog, b, frame(b, 0x04, 0, far, 1, 16));
		ok = far && !qp_get(qps, far, &q) && q.packets == 2;
		snprintf(name, sizeof(name),
			 "a QP %u slots from its first (QP %u) is found there: %llu packets",
			 far_at, far, (unsigned long long)q.packets);
		ktap(ok, name);
		ok = qpn && !bpf_map_update_elem(qps, &home, &zero, BPF_F_LOCK) &&
		     !bpf_map_lookup_elem(cnt, &kf, &freed);
		freed++;
		ok = ok && !bpf_map_update_elem(cnt, &kf, &freed, BPF_ANY);
		run(prog, b, frame(b, 0x04, 0, qpn, 1, 16));
		for (__u32 i = 0; i < RT_QP_SLOTS; i++)
			if (!bpf_map_lookup_elem_flags(qps, &i, &s, BPF_F_LOCK) &&
			    s.key.ifindex && s.key.dqpn == qpn)
				copies++;
		ok = ok && !qp_get(qps, qpn, &q) && q.packets == 2 && copies == 1;
		run(prog, b, frame(b, 0x04, 0, 50000, 0, 16));
		ok = ok && !qp_get(qps, 50000, &q) && q.packets == 1;
		run(prog, b, frame(b, 0x04, 0, 50001, 0, 16));
		bpf_map_lookup_elem(bpf_map__fd(skel->maps.rt_devs), &dk, dev);
		for (int c = 0; c < ncpu; c++)
			over2 += dev[c].c[RT_DEV_QP_OVERFLOW];
		snprintf(name, sizeof(name),
			 "a freed slot: QP %u (slot %u, %u from its first) found again, %u copies; one new QP fits, overflow %llu more",
			 qpn, at, (at - home) & (RT_QP_SLOTS - 1), copies, over2 - over);
		ktap(ok && over2 == over + 1 && qp_get(qps, 50001, &q), name);
	}
	free(dev);
	roce_telemetry_bpf__destroy(skel);
	printf("# %d passed, %d failed\n", n_test - n_fail, n_fail);
	return n_fail ? 1 : 0;
}
