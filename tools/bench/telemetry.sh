#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The cost of the RoCEv2 telemetry program at a receiver: packets per
# second with and without it attached, at 1 and at 10000 QPs, for plain
# RoCEv2/IPv4 and for SRv6-encapsulated RoCEv2 (outer IPv6 + SRH), in
# one VM run; the ratio is printed, and the QP map's memory per QP.
#
#   +-----------+ veth +----------------------------------------+
#   |    gen    |------| rx: [telemetry, prio 0xd35c] then      |
#   | roce-gen  | g0 r0|     a drop filter (prio 65535): freed  |
#   | (seg6     |      +----------------------------------------+
#   |  route)   |
#   +-----------+
#
# roce-gen generates, not pktgen: pktgen's payload starts with its magic
# 0xbe9be955, which read as a BTH has transport version 0xb and would only
# measure the malformed path. roce-gen sends unpaced (rate 0) from one
# thread with sendmmsg; with one vCPU, veth hands each packet to the
# receive softirq on the same CPU, so the sender's rate is
# 1 / (send + receive + program). The drop filter after ours frees each
# packet at rx's ingress, so nothing past tc is measured.
#
# Variants run back to back in rotating order; results are medians.
#
# The pps ratio moves with everything else on the machine (under TCG the
# same variant varies by 2x between rounds). So the run also measures the
# program alone, in the kernel, with BPF_PROG_TEST_RUN (ebpf/tests/
# bench_prog: ns per packet, the timer's cost taken off), and prints the
# overhead it adds to the measured path: path / (path + program), the
# path's ns per packet being 1e9 / its pps without the program. The
# path is roce-gen's send (H.Encaps for SRv6) + veth + rx's ingress: with
# one vCPU the program's time adds to it packet for packet.
#
# The program alone runs three times, its figures' medians are taken;
# with -b, an older build of it (roce_telemetry.bpf.o of another commit)
# runs beside it, batch for batch in turn (bench_prog -b), and its
# overhead is printed too: before and after from the same run, which the
# machine's load moves alike.
#
# usage: telemetry.sh [-r ROUNDS] [-n PACKETS] [-b OBJECT]
#        as root inside a VM with one vCPU and no slab debugging, after
#        make -C ebpf bench:
#        DMSC_VM_SLUB_DEBUG= tools/vm/run.sh -c 1 -- tools/bench/telemetry.sh
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tools/bench/lib.sh
. "$top/tools/bench/lib.sh"
DMSC=$top/agent/dmsc
RG=$top/tools/roce-gen/roce-gen
rounds=5
count=200000
before=
while getopts "r:n:b:" o; do
	case $o in
	r) rounds=$OPTARG ;;
	n) count=$OPTARG ;;
	b) before=$OPTARG ;;
	*) sed -n '/^# usage/,/^set -eu/p' "$0" | sed '$d'; exit 2 ;;
	esac
done

PROG=$top/ebpf/tests/bench_prog
[ -x "$PROG" ] || { echo "telemetry.sh: no $PROG: make -C ebpf bench" >&2; exit 1; }

G=tmb-gen-$$
R=tmb-rx-$$
T=$(mktemp -d)
cleanup() {
	"$DMSC" -n "$R" telemetry detach dev r0 >/dev/null 2>&1 || true
	ip netns del "$G" 2>/dev/null || true
	ip netns del "$R" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

# Packets go to 10.0.0.3 and fc00::3, which rx does not have and, not
# forwarding, drops at IP input if no drop filter took them first.
gen_rx "$G" "$R"
# SRv6: 10.9.0.3 is reached by H.Encaps to fc00::3 (an SRH with one SID).
ip -n "$G" route add 10.9.0.3/32 encap seg6 mode encap segs fc00::3 dev g0
ip netns exec "$R" tc qdisc add dev r0 clsact
if ip netns exec "$R" tc filter add dev r0 ingress prio 65535 matchall \
	action drop 2>/dev/null; then
	drop="a matchall drop filter after ours"
else
	drop="IP input (no cls_matchall/act_gact here)"
fi

# run PATH QPS PROG: one roce-gen run; prints its rate.
run() {
	local dst=10.0.0.3 per
	[ "$1" = srv6 ] && dst=10.9.0.3
	per=$((count / $2))
	if [ "$3" = on ]; then
		"$DMSC" -n "$R" telemetry attach dev r0 || return 1
	fi
	# One packet per QP first: the QPs exist, the timed run is steady state.
	ip netns exec "$G" taskset -c 0 "$RG" send dst "$dst" qps "$2" \
		count 1 rate 0 size 64 json /dev/null >/dev/null 2>&1
	ip netns exec "$G" taskset -c 0 "$RG" send dst "$dst" qps "$2" \
		count "$per" rate 0 size 64 json "$T/send.json" >/dev/null 2>&1
	if [ "$3" = on ]; then
		# Every packet counted, in as many QPs as sent: else no figure.
		"$DMSC" -n "$R" -j telemetry show dev r0 >"$T/show.json"
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))[0]
want = int(sys.argv[2]) * (int(sys.argv[3]) + 1)
if d["roce_packets"] != want or len(d["qps"]) != int(sys.argv[2]):
    sys.exit("telemetry counted %d packets in %d QPs, not %d in %s" % (d["roce_packets"], len(d["qps"]), want, sys.argv[2]))' \
			"$T/show.json" "$2" "$per" >&2
		if [ "$2" -ge 10000 ] && [ ! -e "$T/mem" ]; then
			bpftool -j map show >"$T/mem" 2>/dev/null || true
		fi
		"$DMSC" -n "$R" telemetry detach dev r0
	fi
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rate_pps"])' "$T/send.json"
}

variants=()
for path in plain srv6; do
	for q in 1 10000; do
		for p in off on; do
			variants+=("$path $q $p")
		done
	done
done

echo "# telemetry bench: $(uname -r), $(nproc) cpu, $rounds rounds, $count packets a run, dropped by $drop"
rotate "$rounds" "$T/results" "${variants[@]}"

# The program alone, in the same VM run, after the pps rounds.
for ((r = 0; r < 3; r++)); do
	"$PROG" ${before:+-b "$before"} 200000 >"$T/p"
	echo "# program alone (BPF_PROG_TEST_RUN, ns per packet): $(tr '\n' ' ' <"$T/p")"
	cat "$T/p" >>"$T/prog"
done

python3 - "$T/results" "$T/mem" "$T/prog" <<'EOF'
import json, os, statistics, sys
prog, old = {}, {}
for line in open(sys.argv[3]):
    f = line.split()
    if f[0] == "before":
        old.setdefault((f[1], int(f[2])), []).append(float(f[3]))
    elif f[0] != "timer":
        prog.setdefault((f[0], int(f[1])), []).append(float(f[2]))
prog = {k: statistics.median(v) for k, v in prog.items()}
old = {k: statistics.median(v) for k, v in old.items()}
res = {}
for line in open(sys.argv[1]):
    path, q, p, pps = line.split()
    res.setdefault((path, int(q), p), []).append(float(pps))
more = " before ns/pkt | path / (path + before) |" if old else ""
print("| path | QPs | pps without | pps with | with / without | path ns/pkt | program ns/pkt | path / (path + program) |" + more)
print("| --- " * (10 if old else 8) + "|")
for path in ("plain", "srv6"):
    for q in (1, 10000):
        off = statistics.median(res[(path, q, "off")])
        on = statistics.median(res[(path, q, "on")])
        pns = 1e9 / off
        g = prog[(path, q)]
        row = "| %s | %d | %.0f | %.0f | %.3f | %.0f | %.0f | %.3f |" % (
            path, q, off, on, on / off, pns, g, pns / (pns + g))
        if old:
            b = old[(path, q)]
            row += " %.0f | %.3f |" % (b, pns / (pns + b))
        print(row)
if os.path.exists(sys.argv[2]) and os.path.getsize(sys.argv[2]):
    maps = json.load(open(sys.argv[2]))
    total = 0
    for m in maps:
        if m.get("name") in ("rt_qps", "rt_psns"):
            total += m["bytes_memlock"]
            print("%s: %d entries, key %d B, value %d B, memlock %d B" % (
                m["name"], m["max_entries"], m["bytes_key"], m["bytes_value"],
                m["bytes_memlock"]))
    # 16384: RT_MAX_QPS, the QPs the table holds at most.
    print("QP table and bitmaps: %d B = %.0f B per QP held at most (16384)" % (
        total, total / 16384))
EOF
