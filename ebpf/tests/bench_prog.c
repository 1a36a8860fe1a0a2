// SPDX-License-Identifier: GPL-2.0
/*
 * What the telemetry program costs per packet, measured in the kernel:
 * BPF_PROG_TEST_RUN times each run of the program with the kernel's own
 * clock around it (the duration it reports), so the sender, the stack
 * and the scheduler are not in the figure. Each packet is one run (its
 * own QP and PSN, as on the wire); the same runs of a program that only
 * returns give the timer's own cost, which is subtracted. The figure is
 * the median of BATCHES batch means (timed()).
 *
 * Prints one line per variant, "PATH QPS NS_PER_PACKET", for plain
 * RoCEv2/IPv4 and SRv6-encapsulated, at 1 and 10000 QPs, then
 * "timer NS". tools/bench/telemetry.sh puts it beside the path's own
 * cost measured in the same run. Needs root.
 *
 *   bench_prog [-b OBJECT] [PACKETS]    default 200000 per variant
 *
 * -b times the program in another object file too (an older
 * roce_telemetry.bpf.o: before and after in one run), batch for batch
 * in turn with the one built in, and prints its lines as "before PATH
 * QPS NS". It must have the same rt_ingress program and rt_devs values;
 * rt_devs may be by slot (an array: a test run's is 0) or by device and
 * direction (the hash of objects before 2026-11-30).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "frame.h"
#include "roce_telemetry.h"
#include "roce_telemetry.skel.h"

/*
 * The runs are timed in BATCHES batches and the median of the batches'
 * means is the figure: each batch a mean over many packets, as a rate
 * is, but a batch in which the host took the CPU away (a VM's clock
 * goes on meanwhile) does not move it.
 */
#define BATCHES	11

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * ns per run of @n runs of each of the @np programs @prog, one packet
 * each: the median batch mean. The programs take turns batch by batch,
 * so that a change in the machine's load falls on them alike.
 */
static int timed(const int *prog, int np, int srv6, unsigned int qps,
		 unsigned int n, double *ns)
{
	unsigned int batches = n < BATCHES ? n : BATCHES;
	double mean[2][BATCHES];
	unsigned char b[FRAME_MAX];

	for (unsigned int k = 0; k < batches; k++) {
		unsigned int from = k * n / batches, to = (k + 1) * n / batches;

		for (int j = 0; j < np; j++) {
			unsigned long long sum = 0;

			for (unsigned int i = from; i < to; i++) {
				unsigned int qpn = 0x1000 + i % qps, psn = i / qps;
				size_t len = srv6 ? frame_srv6(b, 0x04, qpn, psn, 64) :
						    frame(b, 0x04, 0, qpn, psn, 64);
				LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = b,
					    .data_size_in = (__u32)len, .repeat = 1);

				if (bpf_prog_test_run_opts(prog[j], &o))
					return -errno;
				sum += o.duration;
			}
			mean[j][k] = (double)sum / (to - from);
		}
	}
	for (int j = 0; j < np; j++) {
		qsort(mean[j], batches, sizeof(mean[j][0]), cmp_double);
		ns[j] = mean[j][batches / 2];
	}
	return 0;
}

/* A program under test: its rt_ingress and its device counters. */
struct target {
	const char *name;	/* NULL: the one built in */
	struct roce_telemetry_bpf *skel;
	struct bpf_object *obj;
	int prog, devs;
	const void *dk;		/* the key of the test runs' device counters */
};

static const struct rt_dev_key lo_key = { .ifindex = 1, .dir = RT_INGRESS };
static const __u32 slot0;

static const void *dev_key(const struct bpf_map *m)
{
	return bpf_map__key_size(m) == sizeof(lo_key) ? (const void *)&lo_key :
							 (const void *)&slot0;
}

static int load(struct target *t)
{
	struct bpf_program *p;
	struct bpf_map *m;

	if (!t->name) {
		t->skel = roce_telemetry_bpf__open_and_load();
		if (!t->skel)
			return -errno;
		t->prog = bpf_program__fd(t->skel->progs.rt_ingress);
		t->devs = bpf_map__fd(t->skel->maps.rt_devs);
		t->dk = dev_key(t->skel->maps.rt_devs);
		return 0;
	}
	t->obj = bpf_object__open_file(t->name, NULL);
	if (!t->obj)
		return -errno;
	if (bpf_object__load(t->obj))
		return -errno;
	p = bpf_object__find_program_by_name(t->obj, "rt_ingress");
	m = bpf_object__find_map_by_name(t->obj, "rt_devs");
	if (!p || !m || bpf_map__value_size(m) != sizeof(struct rt_dev))
		return -ENOENT;
	t->prog = bpf_program__fd(p);
	t->devs = bpf_map__fd(m);
	t->dk = dev_key(m);
	return 0;
}

/* Every run took the full path: counted in a QP, SRv6 as such. */
static int counted(const struct target *t, unsigned int n, int ncpu)
{
	unsigned long long roce = 0, srv6 = 0, want = 2ull * n + 10001;
	struct rt_dev *dev = calloc((size_t)ncpu, sizeof(*dev));

	if (!dev || bpf_map_lookup_elem(t->devs, t->dk, dev)) {
		free(dev);
		return -1;
	}
	for (int c = 0; c < ncpu; c++) {
		roce += dev[c].c[RT_DEV_ROCE];
		srv6 += dev[c].c[RT_DEV_SRV6];
	}
	free(dev);
	if (roce != 2 * want || srv6 != want) {
		fprintf(stderr, "bench_prog: %s: %llu packets counted in a QP (want %llu), %llu as SRv6 (want %llu)\n",
			t->name ? t->name : "built in", roce, 2 * want, srv6, want);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct bpf_insn ret[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = -1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int ncpu = libbpf_num_possible_cpus(), nop, c, np = 1, prog[2], err = 0;
	struct target t[2] = { { 0 }, { 0 } };
	struct rt_dev *dev = NULL;
	unsigned int n;
	double timer, ns[2];

	while ((c = getopt(argc, argv, "b:")) != -1) {
		if (c != 'b')
			goto usage;
		t[1].name = optarg;
		np = 2;
	}
	n = optind < argc ? (unsigned int)strtoul(argv[optind], NULL, 0) : 200000;
	if (!n || optind + 1 < argc) {
usage:
		fprintf(stderr, "usage: bench_prog [-b OBJECT] [PACKETS]\n");
		return 2;
	}
	libbpf_set_print(NULL);
	nop = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "nop", "GPL", ret, 2, NULL);
	if (nop < 0) {
		fprintf(stderr, "bench_prog: cannot load a no-op program: %s\n",
			strerror(errno));
		return 1;
	}
	dev = calloc((size_t)ncpu, sizeof(*dev));
	for (int j = 0; j < np && !err; j++) {
		err = load(&t[j]);
		if (err) {
			fprintf(stderr, "bench_prog: cannot load the program%s%s: %s\n",
				t[j].name ? " from " : "", t[j].name ? t[j].name : "",
				strerror(-err));
			err = -1;	/* said: not again below */
			break;
		}
		prog[j] = t[j].prog;
		/* test runs come in on the loopback device: its counters must exist. */
		if (!dev || bpf_map_update_elem(t[j].devs, t[j].dk, dev, BPF_ANY)) {
			fprintf(stderr, "bench_prog: cannot set up the device counters\n");
			err = -1;
		}
	}
	if (!err)
		err = timed(&nop, 1, 0, 1, n, &timer);
	for (int srv6 = 0; srv6 < 2 && !err; srv6++) {
		for (unsigned int qps = 1; qps <= 10000 && !err; qps *= 10000) {
			/* One packet per QP first: the timed runs find their QP. */
			err = timed(prog, np, srv6, qps, qps, ns);
			if (!err)
				err = timed(prog, np, srv6, qps, n, ns);
			for (int j = 0; j < np && !err; j++)
				printf("%s%s %u %.1f\n", j ? "before " : "",
				       srv6 ? "srv6" : "plain", qps,
				       ns[j] > timer ? ns[j] - timer : 0);
		}
	}
	if (err < -1)
		fprintf(stderr, "bench_prog: BPF_PROG_TEST_RUN: %s\n", strerror(-err));
	for (int j = 0; j < np && !err; j++)
		err = counted(&t[j], n, ncpu);
	if (!err)
		printf("timer %.1f\n", timer);
	free(dev);
	for (int j = 0; j < np; j++) {
		roce_telemetry_bpf__destroy(t[j].skel);
		bpf_object__close(t[j].obj);
	}
	return err ? 1 : 0;
}
