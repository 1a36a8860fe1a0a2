#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The flow table under churn: tunnels deleted and re-added under the same
# id while traffic creates flows, ageing, flushes, namespace deletion and
# rmmod with the table full. Nothing may be left pointing at a freed
# tunnel, and the counters must agree with the table.
#
#  +-----------------------+  s0      e0  +------------------------------+
#  | gen                   |--------------| pe: dmsc                     |
#  |  pktgen kpktgend_0/1  |  veth        |  10.0.2.0/24 -> tunnel 1 ----+--> fc00:9::1
#  |  roce-gen             |              |  10.0.3.0/24 -> tunnel 2 ----+--> fc00:9::2
#  |  10.0.1.1 (.2-.199   |              |  10.0.1.254                  |  d0 (dummy:
#  |  as pktgen sources)   |              |  src fc00:a::1               |  the WAN)
#  +-----------------------+              +------------------------------+
#
# pe forwards what gen sends; dmsc steers it into SRv6 out of a dummy
# device, so every packet costs one forward and one encapsulation and
# nothing else. The kernel's pktgen fills the table fast (one new flow per
# packet: the UDP source port walks 49152..65535 and pktgen's sequence
# number sits where the BTH's destination QP is); roce-gen adds real
# RoCEv2 traffic from many QPs on top.
#
# Why the purge can miss flows, and how the cases provoke it: tunnel del
# walks the rhashtable and removes the tunnel's flows as it goes, pausing
# the walker every 1024 entries. A paused walker resumes by looking for
# its last entry in its bucket; when that entry was just removed it falls
# back to a count of entries to skip in the bucket, which now holds fewer,
# and it skips live ones. A resize restarts the walk from the beginning,
# which finds them again; so the misses that stay are those after the last
# resize. test_purge_full_table therefore purges a table that cannot resize
# (see there), at its highest load, where chains are longest;
# test_purge_while_growing purges while new flows grow the table. A flow
# left behind keeps a pointer to the freed tunnel: ageing or a flush that
# removes it later decrements a counter in freed memory, which slub_debug
# reports as "Poison overwritten" (the VM boots with slub_debug=FZPU) when
# the slab is validated, and listing it dereferences the freed tunnel.
# So the cases count leftovers from the counters (INFO's flow count minus
# the flows the live tunnels hold), list the table only when they agree,
# and then let ageing remove the leftovers before the id is reused.
#
# Tunables (environment):
#   DMSC_CHURN_ROUNDS  rounds of the full-table purge (default 2, 4 with DMSC_DEEP=1); the
#                      growing-table purge runs half as many, the
#                      re-add churn two more
#   DMSC_CHURN_AGE_MAX longest wait for ageing to empty the table (300 s)
#   DMSC_CHURN_CASES   only these cases (names of the test_ functions)
#   DMSC_CHURN_DMESG   write the kernel log to this file at the end
#   DMSC_CHURN_FLOWS   flows put on the tunnel that is purged (default
#                      14000) and DMSC_CHURN_BASE flows on the one that
#                      stays (default 10240); see test_purge_full_table
source "$(dirname "$0")/lib.sh"

RG=$top/tools/roce-gen/roce-gen
PG=/proc/net/pktgen
# Rounds of the purge and re-add cases: 2 in make check, 4 in make
# check-deep (each round is a full table's purge under traffic).
if [ "${DMSC_DEEP:-0}" = 1 ]; then
	ROUNDS=${DMSC_CHURN_ROUNDS:-4}
else
	ROUNDS=${DMSC_CHURN_ROUNDS:-2}
fi
A_FLOWS=${DMSC_CHURN_FLOWS:-14000}
B_FLOWS=${DMSC_CHURN_BASE:-10240}
SRC=fc00:a::1
MAC_E0=02:00:00:00:0e:00
LONG_MS=3600000		# flow_timeout while the table must hold still
AGE_MAX=${DMSC_CHURN_AGE_MAX:-300}
BG_GAP=200000		# ns between packets of background pktgen runs
T=$(mktemp -d)

# --- helpers ---------------------------------------------------------------

gen() { ip netns exec "$NS_gen" "$@"; }
pe() { ip netns exec "$NS_pe" "$@"; }
d() { dns "$NS_pe" "$@"; }		# dmsc on pe

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

topo_up() {
	CASE_MARK=$(log_mark)
	load_module
	mkns gen pe
	# shellcheck disable=SC2154 # set by mkns
	NS_gen=$gen NS_pe=$pe
	ip -n "$NS_gen" link add s0 type veth peer name e0 netns "$NS_pe" \
		address $MAC_E0
	ip -n "$NS_gen" link set s0 up
	ip -n "$NS_pe" link set e0 up
	ip -n "$NS_gen" addr add 10.0.1.1/24 dev s0
	ip -n "$NS_gen" route add default via 10.0.1.254
	ip -n "$NS_pe" addr add 10.0.1.254/24 dev e0
	ip -n "$NS_pe" addr add $SRC/128 dev lo
	ip -n "$NS_pe" link add d0 type dummy
	ip -n "$NS_pe" link set d0 up
	ip -n "$NS_pe" -6 route add fc00:9::/64 dev d0
	ip -n "$NS_pe" route add 10.0.2.0/24 dev d0
	ip -n "$NS_pe" route add 10.0.3.0/24 dev d0
	pe sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	d set flow_limit 262144 flow_timeout $LONG_MS
	ROCE_PIDS=()
	PKTGEN_PID=
	trap case_down EXIT
}

# Stop what runs in the background before the namespaces go.
case_down() {
	[ -z "$PKTGEN_PID" ] || pktgen_halt
	roce_stop
	cleanup_ns
}

# tunnel_up ID DST: tunnel ID to its own SID, and the rule that feeds it.
tunnel_up() {
	d tunnel add "$1" src $SRC path "fc00:9::$1"
	d rule add dst "$2" tunnel "$1"
}
tunnel_down() {
	d rule del dst "$2"
	d tunnel del "$1"
}

# jnum KEY JSON: the first number under "KEY" in JSON; no python (each
# process costs a second or more in a TCG VM).
jnum() {
	[[ $2 =~ \"$1\":\ ?(-?[0-9]+) ]] || fail "no \"$1\" in: ${2:0:200}"
	echo "${BASH_REMATCH[1]}"
}

# info: S_flows S_tunnels S_rules S_untracked S_roce from `dmsc info`.
info() {
	local j
	j=$(d -j info)
	S_flows=$(jnum flows "$j")
	S_tunnels=$(jnum tunnels "$j")
	S_rules=$(jnum rules "$j")
	S_untracked=$(jnum flows_untracked "$j")
	S_roce=$(jnum roce_packets "$j")
}

# snap: info, and F_<id> = the flows tunnel <id> counts (-1: no tunnel).
# LEFT = flows in the table that no live tunnel counts: those of deleted
# tunnels. Exact only while no traffic runs and nothing ages out.
snap() {
	local j re='"id": ?([0-9]+),[^{]*"flows": ?([0-9]+)' sum=0
	info
	F_1=-1 F_2=-1
	j=$(d -j tunnel show)
	while [[ $j =~ $re ]]; do
		printf -v "F_${BASH_REMATCH[1]}" %d "${BASH_REMATCH[2]}"
		sum=$((sum + BASH_REMATCH[2]))
		j=${j#*"${BASH_REMATCH[0]}"}
	done
	LEFT=$((S_flows - sum))
}

# dump: D_total flows listed by `flow show`, D_1/D_2 of tunnels 1/2, and
# D_other of any other tunnel id. Only call it when LEFT is 0: listing a
# flow of a freed tunnel dereferences the freed tunnel.
dump() {
	local j out
	# Read first: through a pipe, a dmsc that failed would read as an
	# empty table to awk.
	j=$(d -j flow show)
	out=$(awk -v RS='"tunnel": ?' '
		NR > 1 { n[$0 + 0]++; t++ }
		END { printf "%d %d %d", t, n[1], n[2] }' <<<"$j")
	read -r D_total D_1 D_2 <<<"$out"
	D_other=$((D_total - D_1 - D_2))
}

# The table holds still: INFO, the tunnels' counts and the dump agree.
table_consistent() {
	snap
	echo "table: $S_flows flows, tunnel 1 $F_1, tunnel 2 $F_2, not in any live tunnel $LEFT"
	check "(( LEFT == 0 ))" \
		"$LEFT flows in the table belong to no live tunnel (INFO $S_flows, tunnels $F_1 + $F_2)"
	dump
	echo "flow show: $D_total flows, tunnel 1 $D_1, tunnel 2 $D_2, other $D_other"
	check "(( D_total == S_flows ))" "flow show lists $D_total flows, INFO says $S_flows"
	check "(( D_1 == (F_1 < 0 ? 0 : F_1) && D_2 == (F_2 < 0 ? 0 : F_2) && D_other == 0 ))" \
		"flow show per tunnel $D_1/$D_2/$D_other, tunnels count $F_1/$F_2"
}

# age_out: a short flow_timeout until the table is empty (polled with
# growing pauses, for up to DMSC_CHURN_AGE_MAX s: a starved TCG VM can be
# very slow), then a long one again; AGE_S is how long it took. Whatever
# was left behind by a tunnel is removed here too: on the buggy module,
# through its freed tunnel.
age_out() {
	local t0=$SECONDS pause=1
	d set flow_timeout 100
	while :; do
		info
		(( S_flows != 0 && SECONDS - t0 < AGE_MAX )) || break
		sleep $pause
		pause=$((pause < 8 ? pause * 2 : 8))
	done
	AGE_S=$((SECONDS - t0))
	d set flow_timeout $LONG_MS
	check "(( S_flows == 0 ))" "ageing left $S_flows flows after ${AGE_S}s"
}

# slab_validate GLOB: SLUB checks every object of the matching caches
# (free ones for their poison, live ones for their red zones) and reports
# to the kernel log. struct dmsc_tunnel (4 KiB of per-bucket counters)
# lives in a kmalloc cache of 8 KiB.
slab_validate() {
	local f
	for f in /sys/kernel/slab/$1/validate; do
		[ ! -w "$f" ] || echo 1 >"$f" 2>/dev/null || true
	done
}

# The caches a freed tunnel or flow lives in: the tunnel was an 8 KiB
# object before the fix, it is 96 bytes (with 4 KiB of counters) now, and
# flows have a cache of their own.
slab_validate_tunnels() {
	slab_validate '*kmalloc*'
	slab_validate 'dmsc_flow'
}

# log_mark: the time stamp of the last line of the kernel log. Not a
# line count: one slub_debug report of an 8 KiB object is ~600 lines, the
# ring buffer wraps, and a count taken before no longer points anywhere.
log_mark() {
	dmesg | awk 'END { printf "%.6f\n", substr($0, 2, index($0, "]") - 2) }'
}

# splat_since MARK: the first splat in the kernel log after time stamp
# MARK, its headline if there is one (slub_debug prints "BUG <cache>
# (...): Poison overwritten" and a WARNING before its hex dump).
splat_since() {
	local log
	# A log that cannot be read is a finding, not a clean log.
	log=$(dmesg) || { echo "cannot read the kernel log"; return 0; }
	RE=$DMESG_SPLAT_RE awk -v m="$1" '
		substr($0, 2, index($0, "]") - 2) + 0 <= m + 0 { next }
		$0 !~ ENVIRON["RE"] { next }
		/BUG |WARNING:|KFENCE|Oops|general protection|refcount_t/ { print; done = 1; exit }
		!first { first = $0 }
		END { if (!done && first) print first }' <<<"$log"
}

# kernel_clean: validate every kmalloc cache, then no splat since the case
# began.
kernel_clean() {
	local s
	slab_validate '*kmalloc*'
	s=$(splat_since "$CASE_MARK")
	[ -z "$s" ] || echo "kernel log: $s"
	check "[ -z \"\$s\" ]" "kernel log: $s"
}

# pktgen SPEC0 SPEC1: one run of the kernel's packet generator in gen, a
# spec per thread (kpktgend_0 on cpu 0, kpktgend_1 on cpu 1): "DST SRC_LO
# SRC_HI COUNT [GAP_NS]" (COUNT 0: until pktgen_stop; GAP_NS between
# packets, default none) or "-" for an idle thread. A background run at
# full speed takes a whole vCPU and starves the CLI: give it a gap.
# The source address walks SRC_LO..SRC_HI, the UDP source port
# 49152..65535, the QP (pktgen's sequence number) 1, 2, ...: each packet
# of a run is a new flow. pktgen_bg runs it in the background.
pktgen_script() {
	local s="" t spec dst lo hi n gap c dev specs=("$1" "$2")
	for t in 0 1; do
		spec=${specs[t]}
		dev=s0@$t
		s+="echo rem_device_all >$PG/kpktgend_$t; i=0; "
		s+="while [ -e $PG/$dev ]; do i=\$((i + 1)); [ \$i -lt 200 ]; sleep 0.05; done; "
		[ "$spec" != - ] || continue
		read -r dst lo hi n gap <<<"$spec"
		s+="echo 'add_device $dev' >$PG/kpktgend_$t; "
		for c in "count $n" "clone_skb 0" "pkt_size 80" "delay ${gap:-0}" \
			"dst_mac $MAC_E0" "dst $dst" "src_min $lo" "src_max $hi" \
			"udp_dst_min 4791" "udp_dst_max 4791" \
			"udp_src_min 49152" "udp_src_max 65535"; do
			s+="echo '$c' >$PG/$dev; "
		done
	done
	echo "$s echo start >$PG/pgctrl"
}
pktgen() {
	local script
	script=$(pktgen_script "$1" "$2")
	gen sh -ec "$script" || fail "pktgen run failed"
}
pktgen_bg() {
	local script
	script=$(pktgen_script "$1" "$2")
	gen sh -ec "$script" 2>"$T/pktgen.err" &
	PKTGEN_PID=$!
}
pktgen_halt() {
	gen sh -c "echo stop >$PG/pgctrl" || true
	wait "$PKTGEN_PID" || true
	PKTGEN_PID=
}
pktgen_stop() {
	pktgen_halt
	settle
}

# settle: wait (up to 60 s) until the flow count holds still for a second.
# pktgen stopping does not stop the flows: up to netdev_max_backlog
# packets are still queued on veth's backlog and create flows as the
# softirq drains them (13k of them after a stop under load on 6.1), so a
# snapshot taken at once compares counts read at different moments.
settle() {
	local prev=-1 i
	for ((i = 0; i < 60; i++)); do
		info
		[ "$S_flows" = "$prev" ] && return 0
		prev=$S_flows
		sleep 1
	done
	echo "# the flow count did not settle in 60 s: $S_flows"
}

# roce_start DST QPS RATE: roce-gen from gen in the background, real
# RoCEv2 packets from QPS QPs, each on its own UDP source port.
roce_start() {
	# Not through gen(): $! must be roce-gen itself (ip netns exec execs
	# it), or TERM would reach a subshell and leave roce-gen running.
	ip netns exec "$NS_gen" "$RG" send dst "$1" qps "$2" rate "$3" duration 3600 size 64 \
		json "$T/roce-$1.json" 2>"$T/roce-$1.err" &
	ROCE_PIDS+=($!)
}
roce_stop() {
	local p
	for p in ${ROCE_PIDS[@]+"${ROCE_PIDS[@]}"}; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	ROCE_PIDS=()
}

# --- cases -----------------------------------------------------------------

# rhashtable doubles above 75 % of its buckets and halves below 30 %.
# 14000 + 10240 + roce-gen's 256 = 24496 flows fill 32768 buckets to
# 74.8 %: no growth once all are in; the 10496 that stay are 32 % of them:
# no shrink while tunnel 1's go. The purge walks a table that holds still, at its longest
# chains, and pauses ~24 times in it. roce-gen keeps sending into tunnel 2
# meanwhile. After each round the leftovers (if any) age out while their
# tunnel is freed, and the slab that held it is validated.
test_purge_full_table() {
	topo_up
	tunnel_up 2 10.0.3.0/24
	local r a left total=0 bad=0 t0 dt mark s splats=0
	for ((r = 1; r <= ROUNDS; r++)); do
		mark=$(log_mark)
		tunnel_up 1 10.0.2.0/24
		pktgen "10.0.2.1 10.0.1.$((10 + r)) 10.0.1.$((10 + r)) $A_FLOWS" \
			"10.0.3.1 10.0.1.2 10.0.1.2 $B_FLOWS"
		snap
		a=$F_1
		roce_start 10.0.3.1 256 1000
		d rule del dst 10.0.2.0/24
		t0=$(now_ms)
		d tunnel del 1
		dt=$(( $(now_ms) - t0 ))
		roce_stop
		snap
		left=$LEFT
		echo "round $r: table $((a + F_2)) flows (tunnel 1 $a, tunnel 2 $F_2 + roce-gen); tunnel del 1 took ${dt}ms; flows left behind: $left"
		check "(( a >= A_FLOWS * 9 / 10 ))" "only $a of $A_FLOWS flows on tunnel 1: too little stress"
		(( left == 0 )) || bad=$((bad + 1))
		total=$((total + left))
		age_out
		slab_validate_tunnels
		s=$(splat_since "$mark")
		echo "round $r: aged out in ${AGE_S}s; kernel log: ${s:-clean}"
		[ -z "$s" ] || splats=$((splats + 1))
	done
	echo "summary: flows left behind by tunnel del in $bad of $ROUNDS rounds ($total flows), kernel splats in $splats rounds"
	check "(( total == 0 ))" \
		"tunnel del left $total flows of the freed tunnel behind ($bad of $ROUNDS rounds)"
	table_consistent
	kernel_clean
}

# New flows keep coming into tunnel 2 (pktgen on cpu 1, a new flow per
# packet, up to 5000 a second) while tunnel 1's 16384 are purged: the table
# shrinks as they go and grows as the others come, so the walker resumes
# on resized tables.
test_purge_while_growing() {
	topo_up
	tunnel_up 2 10.0.3.0/24
	local r a left total=0 bad=0 n=$(((ROUNDS + 1) / 2)) t0 dt mark s splats=0
	for ((r = 1; r <= n; r++)); do
		mark=$(log_mark)
		tunnel_up 1 10.0.2.0/24
		pktgen "10.0.2.1 10.0.1.$((30 + r)) 10.0.1.$((30 + r)) 16384" -
		info
		a=$S_flows
		pktgen_bg - "10.0.3.1 10.0.1.100 10.0.1.199 0 $BG_GAP"
		sleep 1
		d rule del dst 10.0.2.0/24
		t0=$(now_ms)
		d tunnel del 1
		dt=$(( $(now_ms) - t0 ))
		pktgen_stop
		snap
		left=$LEFT
		echo "round $r: tunnel 1 had $a flows; tunnel del 1 took ${dt}ms while tunnel 2 grew to $F_2 flows; flows left behind: $left"
		check "(( a >= 16384 * 9 / 10 && F_2 > 0 ))" "too little stress: $a flows on tunnel 1, $F_2 new ones"
		(( left == 0 )) || bad=$((bad + 1))
		total=$((total + left))
		age_out
		slab_validate_tunnels
		s=$(splat_since "$mark")
		echo "round $r: aged out in ${AGE_S}s; kernel log: ${s:-clean}"
		[ -z "$s" ] || splats=$((splats + 1))
	done
	echo "summary: flows left behind in $bad of $n rounds ($total flows), kernel splats in $splats rounds"
	check "(( total == 0 ))" \
		"tunnel del left $total flows of the freed tunnel behind ($bad of $n rounds)"
	kernel_clean
}

# rule del / tunnel del / re-add under the same id, many times, while
# roce-gen sends into both tunnels from 2048 QPs each and a 200 ms
# flow_timeout (changed now and then) has the ageing work remove and the
# traffic re-create flows all the time: each QP sends every ~second, so
# nearly every packet is a new flow. Then: the table agrees with the counters,
# deleting every tunnel empties it, and ageing finds nothing to do.
test_readd_churn() {
	topo_up
	tunnel_up 1 10.0.2.0/24
	tunnel_up 2 10.0.3.0/24
	d set flow_timeout 200
	local r n=$((ROUNDS + 2)) roce0
	info
	roce0=$S_roce
	roce_start 10.0.2.1 2048 2000
	roce_start 10.0.3.1 2048 2000
	sleep 2
	for ((r = 1; r <= n; r++)); do
		tunnel_down 1 10.0.2.0/24
		tunnel_up 1 10.0.2.0/24
		[ $((r % 3)) != 0 ] || d set flow_timeout $((100 + r * 50))
		echo "re-add $r done at ${SECONDS}s"
	done
	info
	echo "after $n re-adds under traffic: $S_flows flows, $S_untracked untracked packets"
	roce_stop
	d set flow_timeout $LONG_MS
	sleep 1
	table_consistent
	tunnel_down 1 10.0.2.0/24
	tunnel_down 2 10.0.3.0/24
	info
	echo "every tunnel deleted: $S_tunnels tunnels, $S_rules rules, $S_flows flows"
	check "(( S_tunnels == 0 && S_rules == 0 && S_flows == 0 ))" \
		"$S_flows flows remain with no tunnel left"
	check "(( S_roce > $roce0 ))" "no RoCE packet reached pe"
	age_out
	kernel_clean
}

# flow flush while both pktgen threads create flows as fast as they can,
# then once more with the traffic stopped: it must empty the table.
test_flush_under_traffic() {
	topo_up
	tunnel_up 1 10.0.2.0/24
	tunnel_up 2 10.0.3.0/24
	pktgen "10.0.2.1 10.0.1.3 10.0.1.3 $A_FLOWS" \
		"10.0.3.1 10.0.1.2 10.0.1.2 $B_FLOWS"
	info
	echo "before: $S_flows flows"
	pktgen_bg "10.0.2.1 10.0.1.100 10.0.1.149 0 $BG_GAP" \
		"10.0.3.1 10.0.1.150 10.0.1.199 0 $BG_GAP"
	local i
	for i in 1 2 3; do
		d flow flush
		info
		echo "flush $i under traffic: $S_flows flows right after"
	done
	pktgen_stop
	table_consistent
	local had=$S_flows
	d flow flush
	snap
	echo "flush of a still table of $had flows: $S_flows left, tunnels count $F_1/$F_2"
	check "(( S_flows == 0 && F_1 == 0 && F_2 == 0 ))" \
		"flow flush left $S_flows of $had flows (tunnels count $F_1/$F_2)"
	kernel_clean
}

# Deleting the namespace frees its flows, tunnels and rules with the
# ageing work armed and roce-gen sending into it.
test_netns_delete() {
	topo_up
	tunnel_up 1 10.0.2.0/24
	tunnel_up 2 10.0.3.0/24
	local t0=$SECONDS
	pktgen "10.0.2.1 10.0.1.3 10.0.1.3 $A_FLOWS" \
		"10.0.3.1 10.0.1.2 10.0.1.2 $B_FLOWS"
	# Ageing armed with a short period, but no flow due yet: pktgen's
	# first flows are as old as its run, which under KASAN takes longer
	# than a fixed 20 s (all of them aged out before the check).
	d set flow_timeout $(((SECONDS - t0 + 20) * 1000))
	roce_start 10.0.3.1 1024 2000
	sleep 1
	info
	echo "deleting the namespace with $S_flows flows, $S_tunnels tunnels, traffic on"
	check "(( S_flows >= (A_FLOWS + B_FLOWS) * 9 / 10 ))" "only $S_flows flows"
	ip netns del "$NS_pe"
	roce_stop
	# A fresh namespace starts empty.
	mkns pe
	NS_pe=$pe
	info
	echo "new namespace: $S_flows flows, $S_tunnels tunnels"
	check "(( S_flows == 0 && S_tunnels == 0 ))" "a new namespace is not empty"
	kernel_clean
}

# rmmod while pktgen keeps creating flows and roce-gen keeps sending: the
# module goes, forwarding goes on without it, and a reload starts empty.
test_rmmod_under_traffic() {
	topo_up
	tunnel_up 1 10.0.2.0/24
	tunnel_up 2 10.0.3.0/24
	pktgen_bg "10.0.2.1 10.0.1.100 10.0.1.199 0 $BG_GAP" -
	roce_start 10.0.3.1 1024 2000
	sleep 2
	info
	local tx0 tx1 flows=$S_flows
	echo "rmmod with $flows flows, traffic on"
	check "(( flows > 1000 ))" "only $flows flows"
	rmmod dmsc
	check "[ ! -d /sys/module/dmsc ]" "module still there"
	tx0=$(pe cat /sys/class/net/d0/statistics/tx_packets)
	sleep 2
	tx1=$(pe cat /sys/class/net/d0/statistics/tx_packets)
	echo "after rmmod: d0 sent $((tx1 - tx0)) packets in 2 s, unsteered"
	check "(( tx1 > tx0 ))" "forwarding stopped with the module"
	insmod "$DMSC_KO"
	info
	echo "after reload: $S_flows flows, $S_tunnels tunnels, $S_rules rules"
	check "(( S_flows == 0 && S_tunnels == 0 && S_rules == 0 ))" \
		"reloaded module is not empty"
	pktgen_stop
	roce_stop
	kernel_clean
}

# --- main ------------------------------------------------------------------

CASES=(
	test_purge_full_table "tunnel del purges every flow of a full table, under traffic"
	test_purge_while_growing "tunnel del purges every flow while new flows grow the table"
	test_readd_churn "rule/tunnel del and re-add with the same id under traffic and ageing"
	test_flush_under_traffic "flow flush under traffic, then of a still table"
	test_netns_delete "namespace deletion with flows, ageing armed and traffic on"
	test_rmmod_under_traffic "rmmod with flows and traffic on, reload starts empty"
)
# Re-adding, purging and flushing under traffic are the flow table's own
# logic; the older kernels run the netns and rmmod cases, whose teardown
# order is the kernel's.
NEWEST_CASES="test_readd_churn test_purge_while_growing test_purge_full_table
	test_flush_under_traffic"
# DMSC_CHURN_CASES="test_a test_b": run only those.
cases_only CASES "${DMSC_CHURN_CASES:-}"

backlog=$(sysctl -n net.core.netdev_max_backlog)
pktgen_loaded=0
[ -d /sys/module/pktgen ] || pktgen_loaded=1
finish() {
	cleanup_ns
	# DMSC_CHURN_DMESG=FILE: the whole kernel log, for the record.
	[ -z "${DMSC_CHURN_DMESG:-}" ] || dmesg >"$DMSC_CHURN_DMESG" || true
	sysctl -qw net.core.netdev_max_backlog="$backlog"
	[ $pktgen_loaded = 0 ] || rmmod pktgen 2>/dev/null || true
	rm -rf "$T"
}
trap finish EXIT
# pktgen outruns the softirq that drains veth's backlog under TCG.
sysctl -qw net.core.netdev_max_backlog=100000
# Built in (the debug kernel) or a module (Debian's).
if [ ! -d /proc/net/pktgen ] && ! modprobe pktgen 2>/dev/null; then
	echo "TAP version 13"
	echo "1..0 # SKIP pktgen is not available"
	exit 4
fi

ktap_run "${CASES[@]}"
