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
 *   bench_prog [-o OBJECT] [PACKETS]    default 200000 per variant
 *
 * -o times the program in another object file instead of the one built
 * in (an older roce_telemetry.bpf.o, say: before and after in one run).
 * It must have the same rt_ingress program and rt_devs map.
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

/* ns per run of @n runs, one packet each: the median batch mean. */
static int timed(int prog, int srv6, unsigned int qps, unsigned int n,
		 double *ns)
{
	unsigned int batches = n < BATCHES ? n : BATCHES;
	double mean[BATCHES];
	unsigned char b[FRAME_MAX];

	for (unsigned int k = 0; k < batches; k++) {
		unsigned int from = k * n / batches, to = (k + 1) * n / batches;
		unsigned long long sum = 0;

		for (unsigned int i = from; i < to; i++) {
			unsigned int qpn = 0x1000 + i % qps, psn = i / qps;
			size_t len = srv6 ? frame_srv6(b, 0x04, qpn, psn, 64) :
					    frame(b, 0x04, 0, qpn, psn, 64);
			LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = b,
				    .data_size_in = (__u32)len, .repeat = 1);

			if (bpf_prog_test_run_opts(prog, &o))
				return -errno;
			sum += o.duration;
		}
		mean[k] = (double)sum / (to - from);
	}
	qsort(mean, batches, sizeof(mean[0]), cmp_double);
	*ns = mean[batches / 2];
	return 0;
}

/* The program and its device map: built in, or from @path. */
static int load(const char *path, struct roce_telemetry_bpf **skel,
		struct bpf_object **obj, int *prog, int *devs)
{
	struct bpf_program *p;
	struct bpf_map *m;

	if (!path) {
		*skel = roce_telemetry_bpf__open_and_load();
		if (!*skel)
			return -errno;
		*prog = bpf_program__fd((*skel)->progs.rt_ingress);
		*devs = bpf_map__fd((*skel)->maps.rt_devs);
		return 0;
	}
	*obj = bpf_object__open_file(path, NULL);
	if (!*obj)
		return -errno;
	if (bpf_object__load(*obj))
		return -errno;
	p = bpf_object__find_program_by_name(*obj, "rt_ingress");
	m = bpf_object__find_map_by_name(*obj, "rt_devs");
	if (!p || !m || bpf_map__value_size(m) != sizeof(struct rt_dev))
		return -ENOENT;
	*prog = bpf_program__fd(p);
	*devs = bpf_map__fd(m);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct bpf_insn ret[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = -1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct rt_dev_key dk = { .ifindex = 1, .dir = RT_INGRESS };
	int ncpu = libbpf_num_possible_cpus(), prog = -1, nop, devs = -1, c, err = 0;
	struct roce_telemetry_bpf *skel = NULL;
	struct bpf_object *obj = NULL;
	const char *path = NULL;
	struct rt_dev *dev;
	unsigned int n;
	double timer, ns;

	while ((c = getopt(argc, argv, "o:")) != -1) {
		if (c != 'o')
			goto usage;
		path = optarg;
	}
	n = optind < argc ? (unsigned int)strtoul(argv[optind], NULL, 0) : 200000;
	if (!n || optind + 1 < argc) {
usage:
		fprintf(stderr, "usage: bench_prog [-o OBJECT] [PACKETS]\n");
		return 2;
	}
	libbpf_set_print(NULL);
	err = load(path, &skel, &obj, &prog, &devs);
	if (err) {
		fprintf(stderr, "bench_prog: cannot load the program%s%s: %s\n",
			path ? " from " : "", path ? path : "", strerror(-err));
		bpf_object__close(obj);
		return 1;
	}
	nop = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "nop", "GPL", ret, 2, NULL);
	if (nop < 0) {
		fprintf(stderr, "bench_prog: cannot load a no-op program: %s\n",
			strerror(errno));
		roce_telemetry_bpf__destroy(skel);
		bpf_object__close(obj);
		return 1;
	}
	/* test runs come in on the loopback device: its counters must exist. */
	dev = calloc((size_t)ncpu, sizeof(*dev));
	if (!dev || bpf_map_update_elem(devs, &dk, dev, BPF_ANY)) {
		fprintf(stderr, "bench_prog: cannot set up the device counters\n");
		return 1;
	}
	err = timed(nop, 0, 1, n, &timer);
	for (int srv6 = 0; srv6 < 2 && !err; srv6++) {
		for (unsigned int qps = 1; qps <= 10000 && !err; qps *= 10000) {
			/* One packet per QP first: the timed runs find their QP. */
			err = timed(prog, srv6, qps, qps, &ns);
			if (!err)
				err = timed(prog, srv6, qps, n, &ns);
			if (!err)
				printf("%s %u %.1f\n", srv6 ? "srv6" : "plain", qps,
				       ns > timer ? ns - timer : 0);
		}
	}
	if (err) {
		fprintf(stderr, "bench_prog: BPF_PROG_TEST_RUN: %s\n", strerror(-err));
	} else {
		/* Every run took the full path: counted in a QP, SRv6 as such. */
		unsigned long long roce = 0, srv6 = 0, want = 2ull * n + 10001;

		bpf_map_lookup_elem(devs, &dk, dev);
		for (int c = 0; c < ncpu; c++) {
			roce += dev[c].c[RT_DEV_ROCE];
			srv6 += dev[c].c[RT_DEV_SRV6];
		}
		if (roce != 2 * want || srv6 != want) {
			fprintf(stderr, "bench_prog: %llu packets counted in a QP (want %llu), %llu as SRv6 (want %llu)\n",
				roce, 2 * want, srv6, want);
			err = -1;
		} else {
			printf("timer %.1f\n", timer);
		}
	}
	free(dev);
	roce_telemetry_bpf__destroy(skel);
	bpf_object__close(obj);
	return err ? 1 : 0;
}
