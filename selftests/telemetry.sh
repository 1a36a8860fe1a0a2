#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RoCEv2 telemetry (ebpf/roce_telemetry.bpf.c through dmsc telemetry): its
# per-QP counters agree exactly with roce-gen's sink for the same traffic,
# with loss, reordering and duplicates injected by roce-gen and by netem.
#
#  +------+       +------+  netem  +------+  netem  +------+
#  |  h1  |-------|  r1  |---------|  r2  |---------|  h2  |
#  +------+ e0 h1 +------+ r2   r1 +------+ h2   e0 +------+
#  10.0.1.1        plain, or       End.DX4 fc00:9::d4  10.0.2.1
#  2001:db8:1::1   encap seg6 to   End.DX6 fc00:9::d6  2001:db8:2::1
#                  fc00:9::d4/d6
#
#  r1-r2: 10.0.12.1/2, fc00:12::1/2. The program runs at h2's ingress
#  (what the sink receives), at r2's ingress from r1 (SRv6-encapsulated
#  packets in the SRv6 cases) and at h1's egress (what the sender sent).
#  No dmsc.ko is needed: telemetry is a tc program.
source "$(dirname "$0")/lib.sh"

RG=$top/tools/roce-gen/roce-gen
NODES="h1 r1 r2 h2"
T=$(mktemp -d)
# A limit far above what 1 ms holds: the only loss is the 2 % netem draws.
NETEM=(delay 1ms reorder 25% 50% loss 2% duplicate 1% limit 100000)

node_fns
# tm NODE ARGS...: dmsc in the node's namespace. -n, not ip netns exec:
# that one mounts a /sys without the BPF file system the pins live in.
tm() {
	local v=NS_$1
	"$DMSC" -n "${!v}" "${@:2}"
}

# tm_reset NODE: detach whatever is attached there (a failed case's
# leftovers: pins of a deleted namespace would stay behind).
tm_reset() {
	local v=NS_$1 dev dir
	[ -n "${!v:-}" ] || return 0
	tm "$1" -j telemetry show 2>/dev/null | python3 -c '
import json, sys
for d in json.load(sys.stdin):
    print(d["dev"], d["direction"])' 2>/dev/null | while read -r dev dir; do
		tm "$1" telemetry detach dev "$dev" "$dir" || true
	done
}

topo_down() {
	local n
	# All detached first: pins of a deleted namespace would stay behind.
	for n in $NODES; do
		tm_reset "$n"
	done
	nodes_del
	rm -rf "$T"
	return 0
}
trap 'cleanup_ns; topo_down' EXIT

topo_up() {
	nodes_add tm
	link h1 e0 r1 h1
	link r1 r2 r2 r1
	link r2 h2 h2 e0
	h1 ip addr add 10.0.1.1/24 dev e0
	h1 ip addr add 2001:db8:1::1/64 dev e0 nodad
	h1 ip route add default via 10.0.1.254
	h1 ip -6 route add default via 2001:db8:1::fe
	r1 ip addr add 10.0.1.254/24 dev h1
	r1 ip addr add 2001:db8:1::fe/64 dev h1 nodad
	r1 ip addr add 10.0.12.1/24 dev r2
	r1 ip addr add fc00:12::1/64 dev r2 nodad
	r2 ip addr add 10.0.12.2/24 dev r1
	r2 ip addr add fc00:12::2/64 dev r1 nodad
	r2 ip addr add 10.0.2.254/24 dev h2
	r2 ip addr add 2001:db8:2::fe/64 dev h2 nodad
	h2 ip addr add 10.0.2.1/24 dev e0
	h2 ip addr add 2001:db8:2::1/64 dev e0 nodad
	h2 ip route add default via 10.0.2.254
	h2 ip -6 route add default via 2001:db8:2::fe
	r1 ip -6 route add fc00:9::/64 via fc00:12::2
	r2 ip route add 10.0.1.0/24 via 10.0.12.1
	r2 ip -6 route add 2001:db8:1::/64 via fc00:12::1
	r2 ip -6 route add fc00:9::d4/128 encap seg6local action End.DX4 \
		nh4 10.0.2.1 dev h2
	r2 ip -6 route add fc00:9::d6/128 encap seg6local action End.DX6 \
		nh6 2001:db8:2::1 dev h2
	plain_routes
	# Neighbours fixed along the data path: a packet that waits for ARP
	# or ND in a queue of 128 is lost after the observation point (seen
	# on 6.1 under TCG: 128 packets between r2's ingress and h2).
	neigh h1 e0 10.0.1.254 2001:db8:1::fe r1 h1
	neigh r1 r2 10.0.12.2 fc00:12::2 r2 r1
	neigh r2 h2 10.0.2.1 2001:db8:2::1 h2 e0
}

# neigh NODE DEV IPV4 IPV6 PEER PEER_DEV: permanent entries for PEER's addresses.
neigh() {
	local mac
	mac=$($5 cat "/sys/class/net/$6/address")
	$1 ip neigh replace "$3" lladdr "$mac" dev "$2" nud permanent
	$1 ip -6 neigh replace "$4" lladdr "$mac" dev "$2" nud permanent
}

plain_routes() {
	r1 ip route replace 10.0.2.0/24 via 10.0.12.2
	r1 ip -6 route replace 2001:db8:2::/64 via fc00:12::2
}

# SRv6 between r1 and r2: H.Encaps (with an SRH) to r2's DX4/DX6 SIDs.
srv6_routes() {
	r1 ip route replace 10.0.2.0/24 encap seg6 mode encap \
		segs fc00:9::d4 dev r2
	r1 ip -6 route replace 2001:db8:2::/64 encap seg6 mode encap \
		segs fc00:9::d6 dev r2
}

# Nothing of ours left: no pins, no filter, no clsact on NODE DEV...
nothing_left() {
	local node=$1 dev out
	shift
	for dev in "$@"; do
		out=$($node tc qdisc show dev "$dev")
		[[ "$out" != *clsact* ]] || fail "$node $dev: clsact left: $out"
		out=$($node tc filter show dev "$dev" ingress 2>&1; $node tc filter show dev "$dev" egress 2>&1)
		[[ "$out" != *rt_*gress* ]] || fail "$node $dev: filter left: $out"
	done
}
no_pins() {
	[ ! -e /sys/fs/bpf/dmsc ] || fail "pins left: $(find /sys/fs/bpf/dmsc)"
	# The kernel frees the programs once the last reference is gone.
	local i
	for i in $(seq 50); do
		bpftool prog show 2>/dev/null | grep -qE 'name rt_(in|e)gress' || return 0
		sleep 0.2
	done
	fail "programs still loaded: $(bpftool prog show | grep -E 'rt_(in|e)gress')"
}

# sink_start / sink_wait: roce-gen sink on h2, until idle 4 s.
sink_start() {
	local i
	rm -f "$T/ready" "$T/sink.json"
	h2 "$RG" sink idle 4 wait 60 json "$T/sink.json" ready-file "$T/ready" \
		2>"$T/sink.err" &
	SINK=$!
	for i in $(seq 200); do
		[ -e "$T/ready" ] && return 0
		sleep 0.1
	done
	fail "sink did not start: $(cat "$T/sink.err")"
}
sink_wait() {
	wait "$SINK" || fail "sink failed: $(cat "$T/sink.err")"
	# jq, not python, for the one-liners: python's start-up is about a
	# second in a TCG VM.
	echo "sink: $(jq -c .totals "$T/sink.json")"
}
# send DST ARGS...: from h1, on one CPU (see srv6_steer.sh's send()).
send() {
	local dst=$1
	shift
	h1 taskset -c 0 "$RG" send dst "$dst" json "$T/send.json" "$@" \
		2>"$T/send.err" || fail "roce-gen send failed: $(cat "$T/send.err")"
}

# compare NODE DEV DIR REF [MIN]: the program's QPs at NODE DEV DIR equal,
# counter for counter, the sink's (REF=sink) or, at the sender, what the
# sender injected (REF=send). MIN: "lost ooo dup" that must each be > 0
# in the reference, so a case that injected nothing cannot pass.
compare() {
	local node=$1 dev=$2 dir=$3 ref=$4 min=${5:-}
	tm "$node" -j telemetry show dev "$dev" >"$T/show.json" ||
		fail "telemetry show failed"
	python3 - "$T/show.json" "$T/$ref.json" "$dir" "$ref" "$min" <<'EOF' || fail "$node $dev $dir: counters differ from $ref (above)"
import json, sys
show, refd, want_dir, ref, need = (json.load(open(sys.argv[1])),
    json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4], sys.argv[5].split())
devs = [d for d in show if d["direction"] == want_dir]
if len(devs) != 1:
    sys.exit(print("want one attachment, got", [(d["dev"], d["direction"]) for d in show]) or 1)
dev = devs[0]
prog = {(q["src"], q["sport"], q["qpn"]): q for q in dev["qps"]}
bad = 0
if ref == "sink":
    keys = {"packets": "packets", "bytes": "bytes", "lost": "psn_gaps",
            "out_of_order": "out_of_order", "duplicates": "duplicates",
            "too_old": "too_old", "next_psn": "next_psn"}
    rq = {(q["src"], q["sport"], q["dest_qp"]): q for q in refd["qps"]}
    t = refd["totals"]
    if t["socket_drops"] or t["icrc_errors"] or t["malformed"]:
        bad = print("the sink lost packets itself or saw bad ones:", t) or 1
    tot = {"lost": t["psn_gaps"], "ooo": t["out_of_order"], "dup": t["duplicates"]}
else:
    # At the sender: what it sent, and where it skipped, doubled, swapped.
    keys = {"packets": "packets", "bytes": "bytes", "lost": "skipped",
            "out_of_order": "swapped", "duplicates": "duplicated"}
    rq = {(refd["src"], q["sport"], q["dest_qp"]): q for q in refd["qps"]}
    inj = refd["injected"]
    tot = {"lost": inj["skipped"], "ooo": inj["swapped"], "dup": inj["duplicated"]}
for n in need:
    if tot[n] <= 0:
        bad = print("the reference has no", n, "- nothing was tested:", tot) or 1
if set(prog) != set(rq):
    bad = print("QPs differ: program only", sorted(set(prog) - set(rq))[:5],
                "reference only", sorted(set(rq) - set(prog))[:5]) or 1
sums = {}
for k in sorted(set(prog) & set(rq)):
    for pk, rk in keys.items():
        sums[pk] = sums.get(pk, 0) + prog[k][pk]
        if prog[k][pk] != rq[k][rk]:
            bad += 1
            if bad < 10:
                print("QP %s: %s %d, %s %s %d" % (k, pk, prog[k][pk], ref, rk, rq[k][rk]))
print("%s %s: %d QPs, %s; device %s" % (dev["dev"], want_dir, len(prog), sums,
      {k: dev[k] for k in ("packets", "roce_packets", "srv6_packets", "short", "bad_version")}))
if dev["short"] or dev["bad_version"] or dev["qp_overflow"]:
    bad = print("malformed or overflow counted on clean traffic") or 1
sys.exit(1 if bad else 0)
EOF
	DEV_SRV6=$(jq -e '.[0].srv6_packets' "$T/show.json")
	DEV_ROCE=$(jq -e '.[0].roce_packets' "$T/show.json")
}

# Each case starts from nothing attached, no netem, plain routes, and
# the no_pins check of the one before holds for this one.
setup_case() {
	local n
	echo "at ${SECONDS}s"
	for n in $NODES; do
		tm_reset "$n"
	done
	netem_off r2 h2
	netem_off r1 r2
	plain_routes
}

# Packets the per-CPU backlogs dropped so far (all CPUs, all namespaces).
softnet_drops() {
	local _ d sum=0
	while read -r _ d _; do
		sum=$((sum + 16#$d))
	done </proc/net/softnet_stat
	echo "$sum"
}

netem_on() {	# netem_on NODE DEV
	$1 tc qdisc add dev "$2" root netem "${NETEM[@]}" ||
		skip "no sch_netem on this kernel"
}
netem_off() {
	$1 tc qdisc del dev "$2" root 2>/dev/null || true
}

detach_all() {
	tm h2 telemetry detach dev e0 ingress
	tm r2 telemetry detach dev r1 ingress
	tm h1 telemetry detach dev e0 egress
	nothing_left h2 e0
	nothing_left r2 r1
	nothing_left h1 e0
	no_pins
}

# roce_case DST ROUTES NETEM_NODE NETEM_DEV: loss and reordering from
# roce-gen (at h1) and netem (further on); then the counters, three ways.
roce_case() {
	local dst=$1
	$2
	tm h2 telemetry attach dev e0
	tm r2 telemetry attach dev r1 ingress
	tm h1 telemetry attach dev e0 egress
	netem_on "$3" "$4"
	local drops0
	drops0=$(softnet_drops)
	sink_start
	send "$dst" qps 16 count 400 rate 2000 size 256 \
		skip-every 97 dup-every 89 swap-every 53
	sink_wait
	echo "backlog drops during the run: $(( $(softnet_drops) - drops0 ))"
	netem_off "$3" "$4"
	plain_routes
	compare h2 e0 ingress sink "lost ooo dup"
	check "(( DEV_SRV6 == 0 ))" "h2 counted $DEV_SRV6 SRv6 packets after decapsulation"
	compare h1 e0 egress send "lost ooo dup"
}

test_ipv4() {
	setup_case
	roce_case 10.0.2.1 plain_routes r2 h2
	compare r2 r1 ingress send
	check "(( DEV_SRV6 == 0 ))" "r2: $DEV_SRV6 SRv6 packets on a plain path"
	detach_all
}

test_ipv6() {
	setup_case
	roce_case 2001:db8:2::1 plain_routes r2 h2
	detach_all
}

# netem on the encapsulated hop r1 -> r2; r2 sees SRv6 (outer IPv6, SRH,
# inner IPv4/IPv6), h2 the packets End.DX4/DX6 took out.
srv6_case() {
	setup_case
	roce_case "$1" srv6_routes r1 r2
	# netem is before r2's ingress: r2 sees what the sink sees, encapsulated.
	compare r2 r1 ingress sink "lost ooo dup"
	check "(( DEV_SRV6 == DEV_ROCE && DEV_ROCE > 0 ))" \
		"r2: $DEV_SRV6 of $DEV_ROCE RoCE packets seen as SRv6"
	detach_all
}
test_srv6_v4() { srv6_case 10.0.2.1; }
test_srv6_v6() { srv6_case 2001:db8:2::1; }

# Malformed RoCEv2 is counted by kind and makes no QP; the sink agrees.
test_malformed() {
	setup_case
	tm h2 telemetry attach dev e0
	sink_start
	h1 python3 - <<'EOF'
import socket, struct
def bth(op, tver=0, qpn=0x123, psn=7):
    return struct.pack("!BBHI I", op, tver, 0xffff, qpn, psn)
u4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
d4, d6 = ("10.0.2.1", 4791), ("2001:db8:2::1", 4791)
for _ in range(5): u4.sendto(b"x" * 10, d4)            # short: no BTH
for _ in range(3): u4.sendto(bth(4)[:11] + b"1234", d4)  # short: 15 bytes
for _ in range(2): u6.sendto(b"y" * 8, d6)             # short, IPv6
for _ in range(4): u4.sendto(bth(4, tver=1) + b"z" * 28, d4)   # version 1
for _ in range(2): u4.sendto(bth(0x0a) + b"r" * 8, d4)  # write-only: no RETH room
EOF
	sink_wait
	tm h2 -j telemetry show dev e0 >"$T/show.json"
	eval "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))[0]; s = json.load(open(sys.argv[2]))["totals"]
print("P_short=%d P_ver=%d P_roce=%d P_qps=%d S_mal=%d" % (d["short"],
      d["bad_version"], d["roce_packets"], len(d["qps"]), s["malformed"]))' \
		"$T/show.json" "$T/sink.json")"
	echo "program: short $P_short bad_version $P_ver roce $P_roce qps $P_qps; sink malformed $S_mal"
	check "(( P_short == 12 && P_ver == 4 ))" "short $P_short (want 12), bad_version $P_ver (want 4)"
	check "(( P_roce == 0 && P_qps == 0 ))" "malformed packets made $P_qps QPs, $P_roce RoCE packets"
	check "(( S_mal == P_short + P_ver ))" "sink malformed $S_mal, program $((P_short + P_ver))"
	tm h2 telemetry detach dev e0
	nothing_left h2 e0
	no_pins
}

# 32 veth devices x both directions in one namespace, with errors for what is
# not there; all detached, nothing left.
test_many_devices() {
	setup_case
	local i n out devs=()
	for i in $(seq 32); do
		h1 ip link add "d$i" type veth peer name "p$i"
		h1 ip link set "d$i" up
		devs+=("d$i")
	done
	for i in "${devs[@]}"; do
		tm h1 telemetry attach dev "$i"
		tm h1 telemetry attach dev "$i" egress
	done
	out=$(tm h1 telemetry attach dev d1 2>&1) && fail "attached twice"
	[[ "$out" == *'dev "d1" ingress: already attached'* ]] || fail "twice: '$out'"
	out=$(tm h1 telemetry detach dev e0 2>&1) && fail "detached what was not attached"
	[[ "$out" == *'dev "e0" ingress: not attached'* ]] || fail "not attached: '$out'"
	out=$(tm h1 telemetry attach dev nosuch 2>&1) && fail "attached to nothing"
	[[ "$out" == *'dev "nosuch": no such device'* ]] || fail "no device: '$out'"
	n=$(tm h1 -j telemetry show | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(len({(x["dev"], x["direction"]) for x in d if x["dev"].startswith("d")}))')
	check "(( n == 64 ))" "show lists $n attachments, not 64"
	n=$(h1 tc filter show dev d7 egress | grep -c 'rt_egress' || true)
	check "(( n == 1 ))" "d7 egress: $n filters"
	# Other namespaces see none of them.
	n=$(tm h2 -j telemetry show | jq -n 'input | length')
	check "(( n == 0 ))" "h2 shows $n attachments of h1"
	# A device deleted while attached is forgotten: it can be named no more.
	h1 ip link del d32
	unset 'devs[31]'
	n=$(tm h1 -j telemetry show | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
	check "(( n == 62 ))" "after deleting d32, show lists $n attachments, not 62"
	for i in "${devs[@]}"; do
		tm h1 telemetry detach dev "$i" egress
		tm h1 telemetry detach dev "$i" ingress
	done
	nothing_left h1 "${devs[@]}"
	no_pins
	# A clsact someone else made stays, with their filter.
	h1 tc qdisc add dev d1 clsact
	h1 tc filter add dev d1 ingress prio 1 u32 match u32 0 0
	tm h1 telemetry attach dev d1
	tm h1 telemetry detach dev d1
	out=$(h1 tc filter show dev d1 ingress)
	[[ "$out" == *u32* && "$out" != *rt_ingress* ]] || fail "d1 filters: $out"
	no_pins
	# The last attachment's device deleted: the next command unpins.
	tm h1 telemetry attach dev d2
	h1 ip link del d2
	out=$(tm h1 telemetry detach dev d2 2>&1) && fail "detached a deleted device"
	[[ "$out" == *'dev "d2": no such device'* ]] || fail "deleted device: '$out'"
	no_pins
}

# dmsc telemetry serve: Prometheus text whose QP series equal show's.
test_prometheus() {
	setup_case
	local srv i
	tm h2 telemetry attach dev e0
	sink_start
	send 10.0.2.1 qps 8 count 200 rate 3000 size 64 skip-every 37 \
		swap-every 41 dup-every 43
	sink_wait
	tm h2 -j telemetry show >"$T/show.json"
	# dmsc itself in the background, not a function's subshell: the
	# SIGTERM below is for it.
	"$DMSC" -n "$NS_h2" telemetry serve port 9791 2>"$T/serve.err" &
	srv=$!
	for i in $(seq 100); do
		h2 curl -s -D "$T/headers" -o "$T/metrics" \
			http://127.0.0.1:9791/metrics && break
		sleep 0.1
	done
	kill -TERM $srv
	wait $srv || fail "serve exited $?: $(cat "$T/serve.err")"
	grep -qi '^content-type: text/plain; version=0.0.4' "$T/headers" ||
		fail "content type: $(cat "$T/headers")"
	python3 - "$T/metrics" "$T/show.json" "$T/sink.json" <<'EOF2' || fail "metrics differ from show (above)"
import json, re, sys
line = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\} ([0-9.e+-]+)$')
series, bad = {}, 0
for l in open(sys.argv[1]):
    l = l.rstrip("\n")
    if l.startswith("# HELP ") or l.startswith("# TYPE "):
        continue
    m = line.match(l)
    if not m:
        bad = print("not exposition format:", l) or 1
        continue
    labels = dict(re.findall(r'([a-z_]+)="([^"]*)"', m.group(2)))
    series.setdefault(m.group(1), []).append((labels, float(m.group(3))))
show = json.load(open(sys.argv[2]))[0]
want = {"dmsc_roce_qp_packets_total": "packets", "dmsc_roce_qp_bytes_total": "bytes",
        "dmsc_roce_qp_lost_psns": "lost",
        "dmsc_roce_qp_out_of_order_packets_total": "out_of_order",
        "dmsc_roce_qp_duplicate_packets_total": "duplicates",
        "dmsc_roce_qp_next_psn": "next_psn"}
for name, key in want.items():
    got = {(l["src"], int(l["sport"]), int(l["qpn"])): v for l, v in series.get(name, [])}
    exp = {(q["src"], q["sport"], q["qpn"]): q[key] for q in show["qps"]}
    if got != exp:
        bad = print(name, "differs:", sorted(got.items())[:3], "show:", sorted(exp.items())[:3]) or 1
tot = sum(v for l, v in series.get("dmsc_roce_dev_roce_packets_total", []))
sink = json.load(open(sys.argv[3]))["totals"]
print("metrics: %d series, roce packets %d, sink packets %d, lost %d" % (
    sum(len(v) for v in series.values()), tot, sink["packets"], sink["psn_gaps"]))
if tot != sink["packets"] or not sink["psn_gaps"]:
    bad = 1
sys.exit(bad)
EOF2
	tm h2 telemetry detach dev e0
	no_pins
}

# Attach and detach while 64 QPs flow: the traffic is untouched, nothing
# left. Adding or deleting a qdisc deactivates the device's transmit side
# for a moment, and what it sends then is dropped (kernel behaviour, with
# or without dmsc): so the devices carry the flow on their receive side,
# except r2's h2, whose clsact someone else made first; there only our
# filter comes and goes.
test_detach_under_traffic() {
	setup_case
	local i out rounds=4
	# Each attach loads the program: its verifier takes seconds under
	# TCG (6.1 most). Two rounds in make check, four in make check-deep.
	[ "${DMSC_DEEP:-0}" = 1 ] || rounds=2
	r2 tc qdisc add dev h2 clsact
	sink_start
	h1 taskset -c 0 "$RG" send dst 10.0.2.1 qps 64 duration 6 rate 3000 \
		size 256 json "$T/send.json" >/dev/null 2>"$T/send.err" &
	local bg=$!
	for i in $(seq $rounds); do
		tm h2 telemetry attach dev e0
		tm r2 telemetry attach dev r1 ingress
		tm r2 telemetry attach dev h2 egress
		sleep 0.5
		tm h2 telemetry detach dev e0
		tm r2 telemetry detach dev h2 egress
		tm r2 telemetry detach dev r1 ingress
		sleep 0.3
	done
	wait $bg || fail "sender failed: $(cat "$T/send.err")"
	sink_wait
	nothing_left h2 e0
	nothing_left r2 r1
	out=$(r2 tc qdisc show dev h2; r2 tc filter show dev h2 egress)
	[[ "$out" == *clsact* && "$out" != *rt_egress* ]] ||
		fail "r2 h2: not just the clsact we made: $out"
	r2 tc qdisc del dev h2 clsact
	no_pins
	eval "$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["totals"]; t = json.load(open(sys.argv[2]))["totals"]
print("K_pk=%d K_bad=%d S_pk=%d" % (s["packets"], s["psn_gaps"] + s["out_of_order"] + s["duplicates"] + s["malformed"] + s["icrc_errors"], t["packets"]))' \
		"$T/sink.json" "$T/send.json")"
	check "(( K_pk == S_pk && K_bad == 0 ))" "sink got $K_pk of $S_pk packets, $K_bad bad"
	dmesg_clean || fail "kernel log has warnings"
}

for tool in "$DMSC" "$RG" bpftool python3 curl jq; do
	command -v "$tool" >/dev/null || { echo "1..0 # SKIP no $tool"; exit 4; }
done
dmesg_mark
# The per-CPU backlog every veth delivers to: under TCG, netem's bursts
# and the SRv6 hops overflowed its 1000 packets (6.1), a loss after the
# observation points that no tc hook can see. Global, restored on exit.
backlog=$(sysctl -n net.core.netdev_max_backlog)
sysctl -qw net.core.netdev_max_backlog=100000
trap 'cleanup_ns; topo_down; sysctl -qw net.core.netdev_max_backlog=$backlog' EXIT
topo_up
cases=(
	test_ipv4 "RoCEv2/IPv4 with loss, reorder, duplicates: counters equal the sink's and the sender's"
	test_ipv6 "RoCEv2/IPv6 with loss, reorder, duplicates: counters equal the sink's and the sender's"
	test_srv6_v4 "SRv6-encapsulated IPv4 RoCEv2 at the hop, netem on it: equal to the sink's"
	test_srv6_v6 "SRv6-encapsulated IPv6 RoCEv2 at the hop, netem on it: equal to the sink's"
	test_malformed "malformed RoCEv2 counted by kind, no QP, as the sink"
	test_many_devices "64 attachments in a namespace, errors, all detached, nothing left"
	test_detach_under_traffic "attach and detach under traffic: traffic untouched, nothing left"
	test_prometheus "telemetry serve: Prometheus text equal to show"
)
# make check-deep runs these too (selftests/lib.sh): 64 attachments, and
# SRv6 with an IPv6 inner, whose halves test_srv6_v4 and test_ipv6 cover.
# The exporter is userspace reading the maps that the others test.
# The older kernels load the program (their verifier), attach it, count
# and detach under traffic; the SRv6 and malformed parsing is the same
# program's, which test_ipv4 has loaded.
NEWEST_CASES="test_prometheus test_srv6_v4 test_malformed"
DEEP_CASES="test_srv6_v6 test_many_devices test_ipv6"
# DMSC_TELEMETRY_CASES="test_a test_b": run only those (while debugging).
cases_only cases "${DMSC_TELEMETRY_CASES:-}"
ktap_run "${cases[@]}"
