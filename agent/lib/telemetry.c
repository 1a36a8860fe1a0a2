// SPDX-License-Identifier: GPL-2.0
/*
 * dmsc telemetry: the RoCEv2 tc program through its libbpf skeleton.
 *
 * State lives in the kernel, not in a daemon: the first attach in a
 * network namespace loads the object and pins its two programs and four
 * maps in a directory named after the namespace's cookie (never reused,
 * unlike an inode number), and later commands open the pins. The attach
 * map records each (device, direction) and whether dmsc added the clsact
 * qdisc; detach removes exactly what attach added, and the last detach
 * unpins everything, which frees the maps.
 *
 * bpffs is per mount namespace: "ip netns exec" mounts a fresh /sys with
 * no bpffs on /sys/fs/bpf, so pins made there would vanish with the
 * command. dmsc -n NETNS changes only the network namespace and is the
 * way to run these commands in a namespace.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <linux/magic.h>
#include <linux/pkt_sched.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/rtnetlink.h>
#include <linux/if_ether.h>
#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include <netlink/route/classifier.h>

#include "cmd.h"
#include "err.h"
#include "output.h"
#include "parse.h"
#include "telemetry.h"
#include "roce_telemetry.h"
#include "roce_telemetry.skel.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

static const char *const dir_names[] = { "ingress", "egress" };
static const char *const prog_pins[] = { "rt_ingress", "rt_egress" };
static const char *const map_pins[] = {
	"rt_qps", "rt_devs", "rt_attach", "rt_qp_count",
};
enum { M_QPS, M_DEVS, M_ATTACH, M_COUNT, N_MAPS };
/* What this dmsc's program keeps: pins of another version's may differ. */
static const __u32 map_value_sizes[N_MAPS] = {
	sizeof(struct rt_qp), sizeof(struct rt_dev), sizeof(struct rt_attach),
	sizeof(__u64),
};

struct pins {
	char dir[128];		/* the namespace's pin directory */
	int lock_fd;
	int map[N_MAPS];
	int prog[2];
};

static void tm_init(struct pins *t)
{
	memset(t, 0, sizeof(*t));
	t->lock_fd = -1;
	for (int i = 0; i < N_MAPS; i++)
		t->map[i] = -1;
	t->prog[0] = t->prog[1] = -1;
}

/* Close the maps and programs, keep the lock and the directory name. */
static void tm_close_maps(struct pins *t)
{
	for (int i = 0; i < N_MAPS; i++) {
		if (t->map[i] >= 0)
			close(t->map[i]);
		t->map[i] = -1;
	}
	for (int i = 0; i < 2; i++) {
		if (t->prog[i] >= 0)
			close(t->prog[i]);
		t->prog[i] = -1;
	}
}

static void tm_close(struct pins *t)
{
	for (int i = 0; i < N_MAPS; i++)
		if (t->map[i] >= 0)
			close(t->map[i]);
	for (int i = 0; i < 2; i++)
		if (t->prog[i] >= 0)
			close(t->prog[i]);
	if (t->lock_fd >= 0)
		close(t->lock_fd);	/* drops the flock */
	tm_init(t);
}

/*
 * libbpf prints through this; its messages are our errors' details. Quiet
 * where a failure is expected (adding a clsact qdisc that exists).
 */
static bool libbpf_quiet;

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG || libbpf_quiet)
		return 0;
	fprintf(stderr, "dmsc: ");
	return vfprintf(stderr, fmt, ap);
}

/* /sys/fs/bpf/dmsc/netns-COOKIE, and the lock on /sys/fs/bpf/dmsc. */
static int tm_dir(struct pins *t)
{
	uint64_t cookie = 0;
	socklen_t len = sizeof(cookie);
	struct statfs fs;
	int fd;

	if (statfs(TELEMETRY_BPFFS, &fs) || fs.f_type != BPF_FS_MAGIC) {
		errorf("%s is not a BPF file system (mount -t bpf bpf %s; under \"ip netns exec\" it is hidden: use dmsc -n NETNS)",
		       TELEMETRY_BPFFS, TELEMETRY_BPFFS);
		return -1;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie,
				 &len)) {
		struct stat st;

		/* Before 5.14: the inode of the namespace, unique while it lives. */
		if (stat("/proc/self/ns/net", &st)) {
			errorf("cannot name this network namespace: %s",
			       strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		snprintf(t->dir, sizeof(t->dir), "%s/netns-ino-%llu",
			 TELEMETRY_PIN_ROOT, (unsigned long long)st.st_ino);
	} else {
		snprintf(t->dir, sizeof(t->dir), "%s/netns-%llu",
			 TELEMETRY_PIN_ROOT, (unsigned long long)cookie);
	}
	if (fd >= 0)
		close(fd);
	if (mkdir(TELEMETRY_PIN_ROOT, 0700) && errno != EEXIST) {
		errorf("%s: %s", TELEMETRY_PIN_ROOT, strerror(errno));
		return -1;
	}
	/* One dmsc at a time changes the pins and the attachments. */
	t->lock_fd = open(TELEMETRY_PIN_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->lock_fd < 0 || flock(t->lock_fd, LOCK_EX)) {
		errorf("%s: %s", TELEMETRY_PIN_ROOT, strerror(errno));
		return -1;
	}
	return 0;
}

static void pin_path(const struct pins *t, const char *name, char *buf,
		     size_t len)
{
	snprintf(buf, len, "%s/%s", t->dir, name);
}

/* Remove every pin and the directory; the maps go with their last user. */
static void tm_unpin(struct pins *t)
{
	char path[256];

	for (int i = 0; i < N_MAPS; i++) {
		pin_path(t, map_pins[i], path, sizeof(path));
		unlink(path);
	}
	for (int i = 0; i < 2; i++) {
		pin_path(t, prog_pins[i], path, sizeof(path));
		unlink(path);
	}
	rmdir(t->dir);
	rmdir(TELEMETRY_PIN_ROOT);	/* only if nothing else is in it */
}

/* Open the pins. 0, -ENOENT when there are none, or -1 after an error. */
static int tm_open_pins(struct pins *t)
{
	struct bpf_map_info info;
	__u32 info_len;
	char path[256];

	if (access(t->dir, F_OK))
		return -ENOENT;
	for (int i = 0; i < N_MAPS; i++) {
		pin_path(t, map_pins[i], path, sizeof(path));
		t->map[i] = bpf_obj_get(path);
		if (t->map[i] < 0) {
			errorf("%s: %s (remove %s to start over)", path,
			       strerror(errno), t->dir);
			return -1;
		}
		info_len = sizeof(info);
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(t->map[i], &info, &info_len) ||
		    info.value_size != map_value_sizes[i]) {
			errorf("%s: values of %u bytes, not %u: made by another version of dmsc (detach with it, or remove %s to start over)",
			       path, info.value_size, map_value_sizes[i], t->dir);
			return -1;
		}
	}
	for (int i = 0; i < 2; i++) {
		pin_path(t, prog_pins[i], path, sizeof(path));
		t->prog[i] = bpf_obj_get(path);
		if (t->prog[i] < 0) {
			errorf("%s: %s (remove %s to start over)", path,
			       strerror(errno), t->dir);
			return -1;
		}
	}
	return 0;
}

/* Load the object and pin it: the first attach in the namespace. */
static int tm_load(struct pins *t)
{
	struct roce_telemetry_bpf *skel;
	struct bpf_map *maps[N_MAPS];
	struct bpf_program *progs[2];
	char path[256];
	__u64 seed;
	int err;

	libbpf_set_print(libbpf_print);
	skel = roce_telemetry_bpf__open();
	if (!skel) {
		errorf("cannot load the telemetry program: %s",
		       strerror(errno));
		return -1;
	}
	/*
	 * The slots' hash seed, so that no one can pick keys that crowd
	 * one run of slots on every host alike. No entropy: the clock.
	 */
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		seed = ((__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec) *
		       0x9e3779b97f4a7c15ull;
	}
	skel->rodata->rt_seed = seed;
	err = roce_telemetry_bpf__load(skel);
	if (err) {
		errorf("cannot load the telemetry program: %s", strerror(-err));
		roce_telemetry_bpf__destroy(skel);
		return -1;
	}
	maps[M_QPS] = skel->maps.rt_qps;
	maps[M_DEVS] = skel->maps.rt_devs;
	maps[M_ATTACH] = skel->maps.rt_attach;
	maps[M_COUNT] = skel->maps.rt_qp_count;
	progs[RT_INGRESS] = skel->progs.rt_ingress;
	progs[RT_EGRESS] = skel->progs.rt_egress;
	if (mkdir(t->dir, 0700) && errno != EEXIST) {
		errorf("%s: %s", t->dir, strerror(errno));
		goto fail;
	}
	for (int i = 0; i < N_MAPS; i++) {
		pin_path(t, map_pins[i], path, sizeof(path));
		err = bpf_map__pin(maps[i], path);
		if (err) {
			errorf("cannot pin %s: %s", path, strerror(-err));
			goto fail;
		}
		t->map[i] = dup(bpf_map__fd(maps[i]));
	}
	for (int i = 0; i < 2; i++) {
		pin_path(t, prog_pins[i], path, sizeof(path));
		err = bpf_program__pin(progs[i], path);
		if (err) {
			errorf("cannot pin %s: %s", path, strerror(-err));
			goto fail;
		}
		t->prog[i] = dup(bpf_program__fd(progs[i]));
	}
	roce_telemetry_bpf__destroy(skel);	/* the pins and dups hold them */
	return 0;
fail:
	tm_unpin(t);
	roce_telemetry_bpf__destroy(skel);
	return -1;
}

/* The device's index; only Ethernet (and loopback) frames are parsed. */
static int dev_index(const char *dev, int *ifindex)
{
	struct ifreq ifr;
	int fd, ok;

	*ifindex = (int)if_nametoindex(dev);
	if (!*ifindex) {
		errorf("dev \"%s\": no such device", dev);
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ok = fd >= 0 && !ioctl(fd, SIOCGIFHWADDR, &ifr);
	if (fd >= 0)
		close(fd);
	if (ok && ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER &&
	    ifr.ifr_hwaddr.sa_family != ARPHRD_LOOPBACK) {
		errorf("dev \"%s\": not an Ethernet device (link type %u): the program reads Ethernet headers",
		       dev, ifr.ifr_hwaddr.sa_family);
		return -1;
	}
	return 0;
}

static int ncpus(void)
{
	int n = libbpf_num_possible_cpus();

	return n > 0 ? n : 1;
}

/* Filters left on the device's clsact ingress and egress; -1: unknown. */
static int tc_filters_left(int ifindex)
{
	static const uint32_t parents[] = {
		TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS),
		TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS),
	};
	struct nl_sock *sk = nl_socket_alloc();
	int n = 0;

	if (!sk || nl_connect(sk, NETLINK_ROUTE)) {
		nl_socket_free(sk);
		return -1;
	}
	for (size_t i = 0; i < 2 && n >= 0; i++) {
		struct nl_cache *c;

		if (rtnl_cls_alloc_cache(sk, ifindex, parents[i], &c))
			n = -1;
		else {
			n += nl_cache_nitems(c);
			nl_cache_free(c);
		}
	}
	nl_socket_free(sk);
	return n;
}

/*
 * Add the direct-action bpf filter of @prog_fd at (@ifindex, @dir) with
 * dmsc's handle and priority, as bpf_tc_attach() does, and with @slot as
 * its classid (TCA_BPF_CLASSID, which bpf_tc_attach() cannot set): cls_bpf
 * hands it to the program in skb->tc_classid, the attachment's slot in
 * rt_devs. 0 or a negative errno.
 */
static int tc_attach_slot(int ifindex, int dir, int prog_fd, __u32 slot)
{
	struct tcmsg tc = {
		.tcm_family = AF_UNSPEC,
		.tcm_ifindex = ifindex,
		.tcm_handle = TELEMETRY_TC_HANDLE,
		.tcm_parent = TC_H_MAKE(TC_H_CLSACT, dir == RT_INGRESS ?
					TC_H_MIN_INGRESS : TC_H_MIN_EGRESS),
		.tcm_info = TC_H_MAKE((__u32)TELEMETRY_TC_PRIO << 16,
				      htons(ETH_P_ALL)),
	};
	struct bpf_prog_info info;
	__u32 info_len = sizeof(info);
	struct nl_sock *sk;
	struct nl_msg *msg;
	struct nlattr *opts;
	char name[64];
	int err;

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &info_len))
		return -errno;
	/* The name libbpf gives its filters: tc filter show prints it. */
	snprintf(name, sizeof(name), "%s:[%u]", info.name, info.id);
	sk = nl_socket_alloc();
	msg = nlmsg_alloc_simple(RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL);
	if (!sk || !msg) {
		err = -ENOMEM;
		goto out;
	}
	err = nl_connect(sk, NETLINK_ROUTE);
	if (err) {
		err = -EIO;
		goto out;
	}
	if (nlmsg_append(msg, &tc, sizeof(tc), NLMSG_ALIGNTO) ||
	    nla_put_string(msg, TCA_KIND, "bpf") ||
	    !(opts = nla_nest_start(msg, TCA_OPTIONS)) ||
	    nla_put_u32(msg, TCA_BPF_FD, (uint32_t)prog_fd) ||
	    nla_put_string(msg, TCA_BPF_NAME, name) ||
	    nla_put_u32(msg, TCA_BPF_FLAGS, TCA_BPF_FLAG_ACT_DIRECT) ||
	    nla_put_u32(msg, TCA_BPF_CLASSID, slot) ||
	    nla_nest_end(msg, opts)) {
		err = -ENOMEM;
		goto out;
	}
	err = nl_send_sync(sk, msg);	/* frees msg */
	msg = NULL;
	switch (err) {
	case 0:
		break;
	case -NLE_EXIST:
		err = -EEXIST;
		break;
	case -NLE_OBJ_NOTFOUND:
		err = -ENOENT;
		break;
	case -NLE_PERM:
	case -NLE_NOACCESS:
		err = -EPERM;
		break;
	case -NLE_INVAL:
		err = -EINVAL;
		break;
	case -NLE_NODEV:
		err = -ENODEV;
		break;
	default:
		err = -EIO;
	}
out:
	nlmsg_free(msg);
	nl_socket_free(sk);
	return err;
}

/* The lowest slot in rt_devs no attachment has; -1: all taken. */
static int free_slot(const struct pins *t)
{
	static bool used[RT_MAX_ATTACH];
	struct rt_dev_key k, cur, *prev = NULL;
	struct rt_attach at;

	memset(used, 0, sizeof(used));
	while (!bpf_map_get_next_key(t->map[M_ATTACH], prev, &k)) {
		cur = k;
		prev = &cur;
		if (!bpf_map_lookup_elem(t->map[M_ATTACH], &k, &at) &&
		    at.slot < RT_MAX_ATTACH)
			used[at.slot] = true;
	}
	for (int i = 0; i < RT_MAX_ATTACH; i++)
		if (!used[i])
			return i;
	return -1;
}

/* Zero an attachment's counters on every CPU. */
static int slot_zero(const struct pins *t, __u32 slot)
{
	struct rt_dev *zero = calloc((size_t)ncpus(), sizeof(*zero));
	int err;

	if (!zero)
		return -1;
	err = bpf_map_update_elem(t->map[M_DEVS], &slot, zero, BPF_ANY);
	free(zero);
	return err;
}

/*
 * Every QP slot in use, read under its lock (BPF_F_LOCK), a batch of
 * slots a system call; @fn(@arg, slot index, slot) for each. 0, or -1
 * with errno.
 */
static int qps_walk(int map, void (*fn)(void *arg, __u32 i, const struct rt_qp *q),
		    void *arg)
{
	enum { BATCH = 1024 };
	struct rt_qp *v = malloc(BATCH * sizeof(*v));
	__u32 *keys = malloc(BATCH * sizeof(*keys)), next = 0, n;
	LIBBPF_OPTS(bpf_map_batch_opts, o, .elem_flags = BPF_F_LOCK);
	bool first = true;
	int err = 0;

	if (!v || !keys) {
		free(v);
		free(keys);
		errno = ENOMEM;
		return -1;
	}
	do {
		n = BATCH;
		err = bpf_map_lookup_batch(map, first ? NULL : &next, &next,
					   keys, v, &n, &o);
		if (err && errno != ENOENT)
			break;
		first = false;
		for (__u32 i = 0; i < n; i++)
			if (v[i].key.ifindex)
				fn(arg, keys[i], &v[i]);
	} while (!err);
	free(v);
	free(keys);
	return err && errno != ENOENT ? -1 : 0;
}

struct forget {
	int map;
	__u32 ifindex, dir;
	__u64 freed;
};

static void forget_one(void *arg, __u32 i, const struct rt_qp *q)
{
	static const struct rt_qp zero;
	struct forget *f = arg;

	if (q->key.ifindex != f->ifindex || q->key.dir != f->dir)
		return;
	/* Under the slot's lock, as the program claims it: a free slot is all 0. */
	if (!bpf_map_update_elem(f->map, &i, &zero, BPF_F_LOCK))
		f->freed++;
}

/*
 * Free every QP slot of (ifindex, dir), and count them freed: the
 * program holds at most RT_MAX_QPS QPs, claimed less freed. dmsc alone
 * writes the freed count, under its lock.
 */
static void qps_forget(const struct pins *t, int ifindex, int dir)
{
	struct forget f = { .map = t->map[M_QPS], .ifindex = (__u32)ifindex,
			    .dir = (__u32)dir };
	__u32 k = RT_COUNT_FREED;
	__u64 freed;

	qps_walk(f.map, forget_one, &f);
	if (f.freed && !bpf_map_lookup_elem(t->map[M_COUNT], &k, &freed)) {
		freed += f.freed;
		bpf_map_update_elem(t->map[M_COUNT], &k, &freed, BPF_ANY);
	}
}

static bool attach_map_empty(int map)
{
	struct rt_dev_key k;

	return bpf_map_get_next_key(map, NULL, &k) != 0;
}


/*
 * Forget the attachments of devices that are gone (deleted, or moved to
 * another namespace): their filters went with them, and no detach can
 * name them any more. Unpins when nothing is left. Called with the lock.
 * Returns true if the pins were removed.
 */
static bool prune_gone(struct pins *t)
{
	struct rt_dev_key k, cur, *prev = NULL, gone[RT_MAX_ATTACH];
	char name[IF_NAMESIZE];
	size_t n = 0;

	while (n < RT_MAX_ATTACH &&
	       !bpf_map_get_next_key(t->map[M_ATTACH], prev, &k)) {
		cur = k;
		prev = &cur;
		if (!if_indextoname(k.ifindex, name))
			gone[n++] = k;
	}
	for (size_t i = 0; i < n; i++) {
		struct rt_attach at;

		if (!bpf_map_lookup_elem(t->map[M_ATTACH], &gone[i], &at))
			slot_zero(t, at.slot);
		bpf_map_delete_elem(t->map[M_ATTACH], &gone[i]);
		qps_forget(t, (int)gone[i].ifindex, (int)gone[i].dir);
	}
	if (n && attach_map_empty(t->map[M_ATTACH])) {
		tm_unpin(t);
		return true;
	}
	return false;
}

static int do_attach(struct pins *t, const struct telemetry_req *req,
		     int ifindex)
{
	struct rt_dev_key dk = { .ifindex = (__u32)ifindex, .dir = (__u32)req->dir };
	struct rt_attach at = { 0 };
	struct bpf_prog_info info;
	__u32 info_len = sizeof(info);
	struct timespec ts;
	int err, slot;
	bool fresh = false;
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
		    .attach_point = req->dir == RT_INGRESS ? BPF_TC_INGRESS :
							    BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = TELEMETRY_TC_HANDLE,
		    .priority = TELEMETRY_TC_PRIO);

	err = tm_open_pins(t);
	if (!err && prune_gone(t)) {
		tm_close_maps(t);
		err = -ENOENT;
	}
	if (err == -ENOENT) {
		if (tm_load(t))
			return EXIT_FAIL;
		fresh = true;
	} else if (err) {
		return EXIT_FAIL;
	}
	if (!bpf_map_lookup_elem(t->map[M_ATTACH], &dk, &at)) {
		errorf("dev \"%s\" %s: already attached", req->dev,
		       dir_names[req->dir]);
		return EXIT_FAIL;
	}
	/* The attachment's counters, zeroed on every CPU, before packets come. */
	slot = free_slot(t);
	if (slot < 0) {
		errorf("dev \"%s\": cannot add its counters: %d attachments in this namespace already",
		       req->dev, RT_MAX_ATTACH);
		goto undo;
	}
	if (slot_zero(t, (__u32)slot)) {
		errorf("dev \"%s\": cannot add its counters: %s", req->dev,
		       strerror(errno));
		goto undo;
	}
	at.slot = (__u32)slot;
	qps_forget(t, ifindex, req->dir);

	libbpf_quiet = true;
	err = bpf_tc_hook_create(&hook);
	libbpf_quiet = false;
	if (err && err != -EEXIST) {
		errorf("dev \"%s\": cannot add the clsact qdisc: %s", req->dev,
		       strerror(-err));
		goto undo;
	}
	at.created_clsact = !err;
	err = tc_attach_slot(ifindex, req->dir, t->prog[req->dir], at.slot);
	if (err) {
		errorf("dev \"%s\" %s: cannot attach: %s%s", req->dev,
		       dir_names[req->dir], strerror(-err),
		       err == -EEXIST ? " (a filter with dmsc's handle and priority is there)" : "");
		if (at.created_clsact) {
			hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
			bpf_tc_hook_destroy(&hook);
		}
		goto undo;
	}
	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(t->prog[req->dir], &info, &info_len))
		at.prog_id = info.id;
	clock_gettime(CLOCK_REALTIME, &ts);
	at.attached_realtime_ns = (__u64)ts.tv_sec * 1000000000ull +
				  (__u64)ts.tv_nsec;
	if (bpf_map_update_elem(t->map[M_ATTACH], &dk, &at, BPF_NOEXIST)) {
		errorf("dev \"%s\": cannot record the attachment: %s",
		       req->dev, strerror(errno));
		bpf_tc_detach(&hook, &opts);
		goto undo;
	}
	return EXIT_OK;
undo:
	if (fresh)
		tm_unpin(t);
	return EXIT_FAIL;
}

static int do_detach(struct pins *t, const struct telemetry_req *req,
		     int ifindex)
{
	struct rt_dev_key dk = { .ifindex = (__u32)ifindex, .dir = (__u32)req->dir };
	struct rt_dev_key other = { .ifindex = (__u32)ifindex, .dir = (__u32)!req->dir };
	struct rt_attach at, at_other;
	int err, left;
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
		    .attach_point = req->dir == RT_INGRESS ? BPF_TC_INGRESS :
							    BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = TELEMETRY_TC_HANDLE,
		    .priority = TELEMETRY_TC_PRIO);

	err = tm_open_pins(t);
	if (!err && prune_gone(t))
		err = -ENOENT;
	if (err == -ENOENT || (!err && bpf_map_lookup_elem(t->map[M_ATTACH], &dk, &at))) {
		errorf("dev \"%s\" %s: not attached", req->dev,
		       dir_names[req->dir]);
		return EXIT_FAIL;
	}
	if (err)
		return EXIT_FAIL;
	err = bpf_tc_detach(&hook, &opts);
	/* ENOENT: someone removed the filter or the qdisc; forget it anyway. */
	if (err && err != -ENOENT) {
		errorf("dev \"%s\" %s: cannot detach: %s", req->dev,
		       dir_names[req->dir], strerror(-err));
		return EXIT_FAIL;
	}
	bpf_map_delete_elem(t->map[M_ATTACH], &dk);
	slot_zero(t, at.slot);
	qps_forget(t, ifindex, req->dir);
	if (at.created_clsact) {
		if (!bpf_map_lookup_elem(t->map[M_ATTACH], &other, &at_other)) {
			/* Still in use by our other direction: it removes it. */
			at_other.created_clsact = 1;
			bpf_map_update_elem(t->map[M_ATTACH], &other, &at_other,
					    BPF_EXIST);
		} else {
			/* Someone else's filters keep the qdisc. */
			left = tc_filters_left(ifindex);
			if (left == 0) {
				hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
				err = bpf_tc_hook_destroy(&hook);
				if (err && err != -ENOENT && err != -EINVAL) {
					errorf("dev \"%s\": cannot remove the clsact qdisc: %s",
					       req->dev, strerror(-err));
					return EXIT_FAIL;
				}
			}
		}
	}
	if (attach_map_empty(t->map[M_ATTACH]))
		tm_unpin(t);
	return EXIT_OK;
}

/* --- show ------------------------------------------------------------- */

static int key_cmp(const struct rt_qp_key *a, const struct rt_qp_key *b)
{
	if (a->ifindex != b->ifindex)
		return a->ifindex < b->ifindex ? -1 : 1;
	if (a->dir != b->dir)
		return a->dir < b->dir ? -1 : 1;
	if (a->dqpn != b->dqpn)
		return a->dqpn < b->dqpn ? -1 : 1;
	if (a->sport != b->sport)
		return a->sport < b->sport ? -1 : 1;
	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	return memcmp(a->src, b->src, sizeof(a->src) + sizeof(a->dst));
}

static int qp_cmp(const void *a, const void *b)
{
	return key_cmp(&((const struct telemetry_qp *)a)->k,
		       &((const struct telemetry_qp *)b)->k);
}

static int dk_cmp(const void *a, const void *b)
{
	const struct rt_dev_key *x = a, *y = b;

	if (x->ifindex != y->ifindex)
		return x->ifindex < y->ifindex ? -1 : 1;
	return x->dir < y->dir ? -1 : x->dir > y->dir;
}

struct qps_read {
	struct telemetry_qp *v;
	size_t n;
};

static void read_one(void *arg, __u32 i, const struct rt_qp *q)
{
	struct qps_read *r = arg;

	(void)i;
	/* At most RT_MAX_QPS are held; more only for a moment (a detach). */
	if (r->n < RT_MAX_QPS) {
		r->v[r->n].k = q->key;
		r->v[r->n++].v = *q;
	}
}

/* Every QP, read under its lock (BPF_F_LOCK), sorted. */
static struct telemetry_qp *qps_read(int map, size_t *n)
{
	struct qps_read r = { .v = calloc(RT_MAX_QPS, sizeof(*r.v)) };

	*n = 0;
	if (!r.v)
		return NULL;
	if (qps_walk(map, read_one, &r)) {
		errorf("cannot read the QPs: %s", strerror(errno));
		free(r.v);
		return NULL;
	}
	qsort(r.v, r.n, sizeof(*r.v), qp_cmp);
	*n = r.n;
	return r.v;
}

static const char *const op_class_names[RT_OP_CLASSES] = {
	[RT_OP_SEND] = "send", [RT_OP_WRITE] = "write", [RT_OP_READ] = "read",
	[RT_OP_ATOMIC] = "atomic", [RT_OP_ACK] = "ack", [RT_OP_CNP] = "cnp",
	[RT_OP_OTHER] = "other",
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void telemetry_qp_rate(const struct rt_qp *q, uint64_t now, double *Bps,
		       double *pps)
{
	uint64_t el = now > q->win_start_ns ? now - q->win_start_ns : 0;
	double unit = 1 << RT_RATE_FRAC;
	double ab = (double)q->avg_bytes / unit, ap = (double)q->avg_packets / unit;
	double an = (double)q->avg_ns;

	if (q->packets && el >= RT_RATE_WINDOW_NS) {
		double wb = (double)q->win_bytes, wp = (double)q->win_packets;
		double g = 1.0 / (1 << RT_RATE_SHIFT);

		if (!q->avg_ns || el >= RT_RATE_STALE * RT_RATE_WINDOW_NS) {
			ab = wb;
			ap = wp;
			an = (double)el;
		} else {
			ab += g * (wb - ab);
			ap += g * (wp - ap);
			an += g * ((double)el - an);
		}
	}
	*Bps = an > 0 ? ab * 1e9 / an : 0;
	*pps = an > 0 ? ap * 1e9 / an : 0;
}

static void print_qp(const struct telemetry_qp *e, uint64_t now)
{
	const struct rt_qp *q = &e->v;
	int family = e->k.family == 2 ? AF_INET : AF_INET6;
	char a[ADDR_PORT_STRLEN];
	double secs, Bps, pps;

	out_open_object(NULL);
	if (!out_is_json())
		out_text("    %s", format_addr_port(family, e->k.src, e->k.sport,
						   a, sizeof(a)));
	else
		out_string("src", NULL, format_addr(family, e->k.src, a, sizeof(a)));
	out_uint("sport", NULL, e->k.sport);
	out_string("dst", " > %s", format_addr(family, e->k.dst, a, sizeof(a)));
	out_uint("qpn", " qpn %llu", e->k.dqpn);
	out_uint("packets", " packets %llu", q->packets);
	out_uint("bytes", " bytes %llu", q->bytes);
	out_uint("lost", " lost %llu", q->lost);
	out_uint("out_of_order", " out_of_order %llu", q->out_of_order);
	out_uint("duplicates", " duplicates %llu", q->duplicates);
	out_uint("too_old", " too_old %llu", q->too_old);
	out_uint("srv6_packets", " srv6 %llu", q->srv6_packets);
	out_uint("next_psn", " next_psn %llu", q->next_psn);
	out_uint("last_psn", NULL, q->last_psn);
	out_uint("last_opcode", NULL, q->last_opcode);
	out_uint("idle_ms", " idle %llums",
		 now > q->last_ns ? (now - q->last_ns) / 1000000 : 0);
	telemetry_qp_rate(q, now, &Bps, &pps);
	out_uint("rate_pps", " rate %llupps", (uint64_t)(pps + 0.5));
	out_uint("rate_bps", " %llubit/s", (uint64_t)(Bps * 8 + 0.5));
	/* The mean rate from the first to the latest packet. */
	secs = (double)(q->last_ns - q->first_ns) / 1e9;
	out_uint("mean_pps", " mean %llupps", q->packets > 1 && secs > 0 ?
		 (uint64_t)((double)(q->packets - 1) / secs + 0.5) : 0);
	out_text("\n     ");
	out_open_object("opcodes");
	for (int i = 0; i < RT_OP_CLASSES; i++) {
		char fmt[32];

		snprintf(fmt, sizeof(fmt), " %s %%llu", op_class_names[i]);
		if (q->ops[i] || out_is_json())
			out_uint(op_class_names[i], fmt, q->ops[i]);
	}
	out_close_object();
	out_text("\n");
	out_close_object();
}

static const char *const dev_counter_names[RT_DEV_COUNTERS] = {
	[RT_DEV_PACKETS] = "packets", [RT_DEV_ROCE] = "roce_packets",
	[RT_DEV_SRV6] = "srv6_packets", [RT_DEV_SHORT] = "short",
	[RT_DEV_BAD_VERSION] = "bad_version", [RT_DEV_FRAGMENTS] = "fragments",
	[RT_DEV_UNPARSED] = "unparsed", [RT_DEV_QP_OVERFLOW] = "qp_overflow",
};

static void dev_sum(int map, __u32 slot, struct rt_dev *sum)
{
	int n = ncpus();
	struct rt_dev *per = calloc((size_t)n, sizeof(*per));

	memset(sum, 0, sizeof(*sum));
	if (per && !bpf_map_lookup_elem(map, &slot, per))
		for (int c = 0; c < n; c++) {
			for (int i = 0; i < RT_DEV_COUNTERS; i++)
				sum->c[i] += per[c].c[i];
			for (int i = 0; i < 256; i++)
				sum->opcodes[i] += per[c].opcodes[i];
		}
	free(per);
}

void telemetry_snap_free(struct telemetry_snap *s)
{
	free(s->devs);
	free(s->qps);
	memset(s, 0, sizeof(*s));
}

int telemetry_snapshot(struct telemetry_snap *s, int ifindex)
{
	struct rt_dev_key k, cur, *prev = NULL;
	struct timespec ts;
	struct pins t;
	int err;

	memset(s, 0, sizeof(*s));
	tm_init(&t);
	if (tm_dir(&t)) {
		tm_close(&t);
		return -1;
	}
	err = tm_open_pins(&t);
	if (!err && prune_gone(&t))
		err = -ENOENT;
	if (err) {
		if (err == -ENOENT)	/* tm_dir() made it; removed if empty */
			rmdir(TELEMETRY_PIN_ROOT);
		tm_close(&t);
		return err == -ENOENT ? 0 : -1;	/* none: nothing attached */
	}
	s->devs = calloc(RT_MAX_ATTACH, sizeof(*s->devs));
	s->qps = qps_read(t.map[M_QPS], &s->nqps);
	if (!s->devs || !s->qps) {
		errorf("out of memory");
		tm_close(&t);
		telemetry_snap_free(s);
		return -1;
	}
	while (s->ndevs < RT_MAX_ATTACH &&
	       !bpf_map_get_next_key(t.map[M_ATTACH], prev, &k)) {
		struct telemetry_dev *d = &s->devs[s->ndevs];

		cur = k;
		prev = &cur;
		if ((ifindex && (int)k.ifindex != ifindex) ||
		    bpf_map_lookup_elem(t.map[M_ATTACH], &k, &d->at))
			continue;
		d->k = k;
		dev_sum(t.map[M_DEVS], d->at.slot, &d->sum);
		if (!if_indextoname(k.ifindex, d->name))
			snprintf(d->name, sizeof(d->name), "if%u", k.ifindex);
		s->ndevs++;
	}
	qsort(s->devs, s->ndevs, sizeof(*s->devs), dk_cmp);
	s->mono_ns = mono_ns();
	clock_gettime(CLOCK_REALTIME, &ts);
	s->real_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	tm_close(&t);
	return 0;
}

static void print_dev(const struct telemetry_snap *s,
		      const struct telemetry_dev *d)
{
	char fmt[64];

	out_open_object(NULL);
	out_string("dev", "dev %s", d->name);
	out_uint("ifindex", NULL, d->k.ifindex);
	out_string("direction", " %s", dir_names[d->k.dir & 1]);
	out_uint("prog_id", " prog %llu", d->at.prog_id);
	out_double("attached", NULL, (double)d->at.attached_realtime_ns / 1e9);
	for (int i = 0; i < RT_DEV_COUNTERS; i++) {
		snprintf(fmt, sizeof(fmt), " %s %%llu", dev_counter_names[i]);
		out_uint(dev_counter_names[i], fmt, d->sum.c[i]);
	}
	out_text("\n  opcodes");
	out_open_array("opcodes");
	for (int i = 0; i < 256; i++) {
		if (!d->sum.opcodes[i])
			continue;
		out_open_object(NULL);
		out_uint("opcode", " 0x%02llx", (uint64_t)i);
		out_uint("packets", ":%llu", d->sum.opcodes[i]);
		out_close_object();
	}
	out_close_array();
	out_text("\n");
	out_open_array("qps");
	for (size_t i = 0; i < s->nqps; i++)
		if (s->qps[i].k.ifindex == d->k.ifindex &&
		    s->qps[i].k.dir == d->k.dir)
			print_qp(&s->qps[i], s->mono_ns);
	out_close_array();
	out_close_object();
}

static int do_show(int ifindex)
{
	struct telemetry_snap s;

	if (telemetry_snapshot(&s, ifindex))
		return EXIT_FAIL;
	out_open_array(NULL);
	for (size_t i = 0; i < s.ndevs; i++)
		print_dev(&s, &s.devs[i]);
	out_close_array();
	telemetry_snap_free(&s);
	return EXIT_OK;
}

int telemetry_run(const struct telemetry_req *req)
{
	struct pins t;
	int ifindex = 0, ret;

	tm_init(&t);
	libbpf_set_print(libbpf_print);
	if (req->dev && dev_index(req->dev, &ifindex)) {
		/* A device that is gone: forget what was attached to it. */
		if (req->verb == TELEMETRY_DETACH && !tm_dir(&t) &&
		    !tm_open_pins(&t))
			prune_gone(&t);
		tm_close(&t);
		return EXIT_FAIL;
	}
	if (req->verb == TELEMETRY_SHOW)
		return do_show(ifindex);
	if (req->verb == TELEMETRY_SERVE)
		return telemetry_serve(req);
	if (tm_dir(&t)) {
		tm_close(&t);
		return EXIT_FAIL;
	}
	if (req->verb == TELEMETRY_ATTACH)
		ret = do_attach(&t, req, ifindex);
	else
		ret = do_detach(&t, req, ifindex);
	tm_close(&t);
	return ret;
}
