#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dmsc-agent's telemetry (the sr role's "telemetry" section): it attaches
# the RoCEv2 program where its configuration says, serves /metrics, sends
# type-5 QoS reports to a Unix socket, and on SIGTERM detaches what it
# attached and nothing else. The numbers it exports are checked against
# dmsc -j telemetry show and roce-gen's sink for the same traffic, with
# loss, reordering and duplicates from roce-gen and netem.
#
#  +------+  e0 --netem-->  e0  +------+
#  |  h1  |---------------------|  h2  |  dmsc-agent (sr), telemetry on
#  +------+ 10.0.9.1   10.0.9.2 +------+  e0 ingress; SMO = a Python listener
#
# The agent runs in h2's network namespace through nsenter --net, not ip
# netns exec: that one mounts a /sys without the BPF file system the pins
# live in. Capabilities: CAP_NET_ADMIN, CAP_BPF and CAP_PERFMON only (6.1's
# verifier refuses the program without CAP_PERFMON). KTAP.
source "$(dirname "$0")/lib.sh"
AGENT=${AGENT:-$top/agent/dmsc-agent}
RG=$top/tools/roce-gen/roce-gen
PKI=$top/tools/pki/dmsc-pki
PORT=9791

T="" AG="" SMO="" CTL="" h1="" h2=""	# mkns sets h1, h2
case_cleanup() {
	[ -z "$CTL" ] || kill -TERM "$CTL" 2>/dev/null || true
	[ -z "$CTL" ] || wait "$CTL" 2>/dev/null || true
	[ -z "$AG" ] || kill -TERM "$AG" 2>/dev/null || true
	[ -z "$AG" ] || kill -CONT "$AG" 2>/dev/null || true	# if it failed stopped
	[ -z "$AG" ] || wait "$AG" 2>/dev/null || true
	[ -z "$SMO" ] || kill "$SMO" 2>/dev/null || true
	[ -z "$NOTIFY_PID" ] || kill "$NOTIFY_PID" 2>/dev/null || true
	[ -z "$h2" ] || tm telemetry detach dev e0 >/dev/null 2>&1 || true
	cleanup_ns
	[ -z "$T" ] || rm -rf "$T"
}

tm() { "$DMSC" -n "$h2" "$@"; }
h1x() { ip netns exec "$h1" "$@"; }
h2x() { ip netns exec "$h2" "$@"; }

wait_for() {	# wait_for COND REASON [TENTHS]: up to 10 s by default
	for _ in $(seq "${3:-100}"); do
		eval "$1" && return 0
		sleep 0.1
	done
	sed 's/^/agent: /' "$T/log" >&2 || true
	fail "$2"
}

setup() {
	T=$(mktemp -d)
	load_module	# the sr role opens the dmsc family
	mkns h1 h2
	ip -n "$h1" link add e0 type veth peer name e0 netns "$h2"
	ip -n "$h1" addr add 10.0.9.1/24 dev e0
	ip -n "$h2" addr add 10.0.9.2/24 dev e0
	ip -n "$h1" link set e0 up
	ip -n "$h2" link set e0 up
	# Fixed neighbours: nothing waits for ARP between netem and the sink.
	ip -n "$h1" neigh replace 10.0.9.2 dev e0 nud permanent \
		lladdr "$(h2x cat /sys/class/net/e0/address)"
	ip -n "$h2" neigh replace 10.0.9.1 dev e0 nud permanent \
		lladdr "$(h1x cat /sys/class/net/e0/address)"
}

# The SMO's side: accept connections on $T/smo.sock, read frames (4-byte
# big-endian length, JSON), one decoded report a line in $T/reports.
# Refuses what the agent must never send: a length of 0 or above 4 MiB,
# a repeated key, NaN.
smo_listen() {
	python3 -c '
import json, socket, struct, sys
def pairs(kv):
    keys = [k for k, _ in kv]
    if len(keys) != len(set(keys)):
        raise ValueError("repeated key in %s" % keys)
    return dict(kv)
def nonfinite(x):
    raise ValueError("non-finite number " + x)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(4)
out = open(sys.argv[2], "a")
def read(c, n):
    b = b""
    while len(b) < n:
        x = c.recv(n - len(b))
        if not x:
            return None
        b += x
    return b
while True:
    c, _ = s.accept()
    while True:
        h = read(c, 4)
        if h is None:
            break
        n = struct.unpack("!I", h)[0]
        if not 0 < n <= 4 << 20:
            out.write("BAD frame length %d\n" % n)
            break
        body = read(c, n)
        if body is None:
            out.write("BAD truncated frame\n")
            break
        try:
            m = json.loads(body, object_pairs_hook=pairs, parse_constant=nonfinite)
            out.write(json.dumps(m, sort_keys=True) + "\n")
        except ValueError as e:
            out.write("BAD %s\n" % e)
        out.flush()
    c.close()
' "$T/smo.sock" "$T/reports" &
	SMO=$!
	touch "$T/reports"
	wait_for "[ -S '$T/smo.sock' ]" "no SMO socket"
}

# start_agent CONFIG-JSON: in h2, as the unit would, plus CAP_BPF and
# CAP_PERFMON.
start_agent() {
	echo "$1" >"$T/agent.json"
	: >"$T/notified"
	NOTIFY_SOCKET=$T/notify nsenter --net="/run/netns/$h2" \
		setpriv --bounding-set=-all,+net_admin,+bpf,+perfmon --inh-caps=-all -- \
		"$AGENT" -c "$T/agent.json" >"$T/log" 2>&1 &
	AG=$!
}

# stop_agent: SIGTERM, the exit status of a clean stop, its log shown.
stop_agent() {
	local rc=0
	kill -TERM "$AG"
	wait "$AG" || rc=$?
	AG=""
	sed 's/^/agent: /' "$T/log"
	check "(( rc == 143 ))" "exit status $rc after SIGTERM"
}

nreports() { grep -c '"type": 5' "$T/reports" || true; }

# Nothing of ours on h2's e0 and no pins or programs anywhere.
nothing_left() {
	local out
	out=$(h2x tc qdisc show dev e0; h2x tc filter show dev e0 ingress)
	[[ "$out" != *clsact* && "$out" != *rt_ingress* ]] || fail "left on e0: $out"
	[ ! -e /sys/fs/bpf/dmsc ] || fail "pins left: $(find /sys/fs/bpf/dmsc)"
	for _ in $(seq 50); do
		bpftool prog show 2>/dev/null | grep -qE 'name rt_(in|e)gress' || return 0
		sleep 0.2
	done
	fail "programs still loaded: $(bpftool prog show | grep -E 'rt_(in|e)gress')"
}

# traffic TAG COUNT: 8 QPs from h1 to h2's sink, with roce-gen's skips,
# duplicates and swaps and netem's loss, reordering and duplicates on
# h1's e0 (before the program at h2's ingress: it sees what the sink sees).
traffic() {
	echo "at ${SECONDS}s: traffic $1"
	rm -f "$T/ready"
	h1x tc qdisc replace dev e0 root netem delay 1ms reorder 25% 50% \
		loss 2% duplicate 1% limit 100000
	# The sender may be slow to start in a busy TCG VM: the sink waits
	# up to 60 s for the first packet (on 6.1 under load, 5 s of idle
	# from the start ended it with nothing), then 5 s of idle end it.
	h2x "$RG" sink idle 5 wait 60 json "$T/sink-$1.json" ready-file "$T/ready" \
		2>"$T/sink.err" &
	local sink=$!
	for _ in $(seq 100); do
		[ -e "$T/ready" ] && break
		sleep 0.1
	done
	h1x taskset -c 0 "$RG" send dst 10.0.9.2 qps 8 count "$2" rate 2000 \
		size 200 skip-every 37 dup-every 43 swap-every 41 \
		json "$T/send-$1.json" 2>"$T/send.err" ||
		fail "roce-gen send: $(cat "$T/send.err")"
	wait "$sink" || fail "sink: $(cat "$T/sink.err")"
	h1x tc qdisc del dev e0 root
	python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["totals"]; print("sink:", t); sys.exit(t["packets"] == 0)' \
		"$T/sink-$1.json" || fail "the sink got nothing"
}

# Reports until COUNT more than now have come.
more_reports() {
	local want=$(( $(nreports) + $1 ))
	wait_for "(( \$(nreports) >= $want ))" "fewer than $want reports" 50
}

test_export() {
	trap case_cleanup EXIT
	setup
	smo_listen
	notify_listen
	start_agent '{ "node": "h2", "roles": ["sr"], "telemetry": {
		"devices": [ { "dev": "e0", "direction": "ingress" } ],
		"prometheus": { "address": "127.0.0.1", "port": '$PORT' },
		"report_interval_ms": 200, "report_to": "'"$T/smo.sock"'" } }'
	wait_for "grep -q '^READY=1' '$T/notified'" "no READY=1"
	check "grep -qx 'READY=1 STATUS=sr: logging the events of the dmsc module, telemetry attached' '$T/notified'" \
		"notified: $(cat "$T/notified")"
	check "[ \"\$(tm -j telemetry show | json_get '[(x[\"dev\"], x[\"direction\"]) for x in d]')\" = \"[('e0', 'ingress')]\" ]" \
		"not attached: $(tm telemetry show)"

	# Phase 1: counters from 0 at the agent's attach.
	traffic one 300
	more_reports 3
	tm -j telemetry show >"$T/show-one.json"
	h2x curl -sf -D "$T/headers" -o "$T/metrics" "http://127.0.0.1:$PORT/metrics" ||
		fail "no /metrics"
	grep -qi '^content-type: text/plain; version=0.0.4' "$T/headers" ||
		fail "content type: $(cat "$T/headers")"
	cp "$T/reports" "$T/reports-one"

	# Phase 2: the attachment made again under the agent: its counters
	# restart from 0. More packets than before, on the same QPs, so
	# that counters that merely went on growing could not tell; the
	# agent stopped meanwhile, so that no report sees the time with
	# nothing attached, and one report spans the restart.
	# Stopped while not holding the telemetry lock (a snapshot holds it):
	# flock(1) takes it first, or the detach below would wait for ever.
	flock /sys/fs/bpf/dmsc kill -STOP "$AG"
	tm telemetry detach dev e0
	tm telemetry attach dev e0
	traffic two 600
	kill -CONT "$AG"
	more_reports 3
	tm -j telemetry show >"$T/show-two.json"
	python3 - "$T" <<'EOF' || fail "the exported numbers differ (above)"
import json, re, sys
T = sys.argv[1]
bad = 0
def err(*a):
    global bad
    bad += 1
    print(*a)
lines = open(T + "/reports").read().splitlines()
for l in lines:
    if l.startswith("BAD"):
        err("the SMO listener refused a frame:", l)
reps = [json.loads(l) for l in lines if not l.startswith("BAD")]
n1 = len(open(T + "/reports-one").read().splitlines())
KEYS = ("packets", "bytes", "lost", "out_of_order", "duplicates")
SINK = {"packets": "packets", "bytes": "bytes", "lost": "psn_gaps",
        "out_of_order": "out_of_order", "duplicates": "duplicates"}

# Every report: header, sequence, and rates that are the interval's.
for i, r in enumerate(reps):
    if (r["version"], r["type"], r["node"], r["seq"]) != (1, 5, "h2", i + 1):
        err("report %d header:" % i, {k: r[k] for k in ("version", "type", "node", "seq")})
    # The timer's 200 ms, give or take how late each snapshot was taken;
    # the one report that spans the agent's stop (phase 2) takes as long
    # as that traffic did: 106 s once on a loaded machine.
    if not 0 < r["interval_us"] <= 600000000:
        err("report %d: interval %d us for 200 ms" % (i, r["interval_us"]))
long_ones = [i for i, r in enumerate(reps) if r["interval_us"] > 60000000]
if len(long_ones) > 1:
    err("reports %s each span over a minute: only the one across the stop may" % long_ones)
    if r["time_ms"] < 1e12:
        err("report %d: time %d ms" % (i, r["time_ms"]))
    for e in r["devices"] + r["qps"]:
        iv, tot = e["interval"], e["total"]
        for k in KEYS:
            if not 0 <= iv[k] <= tot[k]:
                err("report %d %s: interval %s %d, total %d" % (i, e["dev"], k, iv[k], tot[k]))
        bps = (iv["bytes"] * 8000000 + r["interval_us"] // 2) // r["interval_us"] if r["interval_us"] else 0
        seen = iv["packets"] + iv["lost"]
        if iv["throughput_bps"] != bps or abs(iv["loss_rate"] - (iv["lost"] / seen if seen else 0)) > 1e-9:
            err("report %d: throughput %d (want %d), loss %g" % (i, iv["throughput_bps"], bps, iv["loss_rate"]))
    for d in r["devices"]:
        qs = [q for q in r["qps"] if (q["dev"], q["direction"]) == (d["dev"], d["direction"])]
        for k in KEYS:
            if d["interval"][k] != sum(q["interval"][k] for q in qs) or \
               d["total"][k] != sum(q["total"][k] for q in qs):
                err("report %d device %s: %s not the sum of its QPs" % (i, d["dev"], k))

def qkey(q, qpn="qpn"):
    return (q["src"], q["sport"], q[qpn])

def check_phase(name, show, part, sink):
    """The last report of the part equals show and the sink; its QPs'
    interval changes over the part add up to their totals."""
    last = part[-1]
    show = json.load(open(show))
    sink = json.load(open(sink))
    sq = {qkey(q, "dest_qp"): q for q in sink["qps"]}
    pq = {qkey(q): q for q in show[0]["qps"]}
    rq = {qkey(q): q for q in last["qps"]}
    if not (set(sq) == set(pq) == set(rq)) or len(rq) != 8:
        err(name, "QPs differ: sink", sorted(sq)[:2], "show", sorted(pq)[:2],
            "report", sorted(rq)[:2], "sink totals", sink["totals"])
        return
    if sink["totals"]["socket_drops"] or not all(sink["totals"][k] for k in ("psn_gaps", "out_of_order", "duplicates")):
        err(name, "the sink lost packets or saw no loss, reordering, duplicates:", sink["totals"])
    sums = {}
    for k in sorted(rq):
        for c in KEYS:
            tot = rq[k]["total"][c]
            if tot != pq[k][c] or tot != sq[k][SINK[c]]:
                err(name, "QP", k, c, "report", tot, "show", pq[k][c], "sink", sq[k][SINK[c]])
            d = sum(q["interval"][c] for r in part for q in r["qps"] if qkey(q) == k)
            # Late packets lower lost: its changes add up to at least it.
            if (d != tot) if c != "lost" else (d < tot):
                err(name, "QP", k, c, "changes add up to", d, "total", tot)
            sums[c] = sums.get(c, 0) + tot
    peak = max(r["devices"][0]["interval"]["throughput_bps"] for r in part if r["devices"])
    lossy = max(r["devices"][0]["interval"]["loss_rate"] for r in part if r["devices"])
    print("%s: %d reports, totals %s, peak %d bit/s, highest loss rate %.4f" % (
        name, len(part), sums, peak, lossy))
    if not peak or not lossy:
        err(name, "no throughput or no loss in any report")
    return rq

check_phase("phase 1", T + "/show-one.json", reps[:n1], T + "/sink-one.json")
check_phase("phase 2 (attached again)", T + "/show-two.json", reps[n1:], T + "/sink-two.json")

# /metrics (phase 1): the QP series equal show's and the report's.
line = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\} ([0-9.e+-]+)$')
series = {}
for l in open(T + "/metrics"):
    if l.startswith("#"):
        continue
    m = line.match(l.rstrip("\n"))
    if not m:
        err("not exposition format:", l)
        continue
    labels = dict(re.findall(r'([a-z_]+)="([^"]*)"', m.group(2)))
    series.setdefault(m.group(1), {})[(labels.get("src"), int(labels.get("sport", 0)), int(labels.get("qpn", 0)))] = float(m.group(3))
show = {qkey(q): q for q in json.load(open(T + "/show-one.json"))[0]["qps"]}
for name, c in (("dmsc_roce_qp_packets_total", "packets"), ("dmsc_roce_qp_bytes_total", "bytes"),
                ("dmsc_roce_qp_lost_psns", "lost"),
                ("dmsc_roce_qp_out_of_order_packets_total", "out_of_order"),
                ("dmsc_roce_qp_duplicate_packets_total", "duplicates")):
    got = series.get(name, {})
    if got != {k: q[c] for k, q in show.items()}:
        err(name, "differs from show:", sorted(got.items())[:2], "show:", sorted((k, q[c]) for k, q in show.items())[:2])
print("metrics: %d QP series checked" % (5 * len(show)))
sys.exit(1 if bad else 0)
EOF
	stop_agent
	nothing_left
	grep -q 'telemetry: detached e0 ingress' "$T/log" || fail "no detach logged"
	h2x curl -s -o /dev/null "http://127.0.0.1:$PORT/metrics" && fail "/metrics still served"
	dmesg_clean || fail "kernel log has warnings"
}

# An attachment the agent did not make is read and left in place.
test_not_its_own() {
	trap case_cleanup EXIT
	setup
	notify_listen
	tm telemetry attach dev e0
	start_agent '{ "node": "h2", "roles": ["sr"], "telemetry": {
		"devices": [ { "dev": "e0" } ], "prometheus": { "port": '$PORT' } } }'
	wait_for "grep -q '^READY=1' '$T/notified'" "no READY=1"
	h2x curl -sf -o "$T/metrics" "http://127.0.0.1:$PORT/metrics" || fail "no /metrics"
	grep -q '^dmsc_roce_dev_packets_total{dev="e0",direction="ingress"} ' "$T/metrics" ||
		fail "e0 not in /metrics: $(head "$T/metrics")"
	stop_agent
	grep -q 'e0 ingress is attached already' "$T/log" || fail "no note of the attachment"
	check "[ \"\$(tm -j telemetry show | json_get 'len(d)')\" = 1 ]" \
		"the agent removed an attachment it did not make"
	tm telemetry detach dev e0
	nothing_left
}

# The controller (srd and smo roles, the AAM's table) in h2's namespace on
# 127.0.0.1:7400, its control socket $T/ctl.sock, its log $T/ctl.log.
start_ctl() {
	echo '{ "node": "ctl", "roles": ["srd", "aam", "smo"], "control": "'"$T"'/ctl.sock",
		"tls": { "ca": "'"$T"'/pki/ca.crt", "cert": "'"$T"'/pki/ctl.crt", "key": "'"$T"'/pki/ctl.key" },
		"srd": { "listen": "127.0.0.1:7400", "store": { "sqlite": "'"$T"'/srd.db" } } }' >"$T/ctl.json"
	ip netns exec "$h2" "$AGENT" -c "$T/ctl.json" >>"$T/ctl.log" 2>&1 &
	CTL=$!
	wait_for "[ -S '$T/ctl.sock' ]" "the controller did not start: $(cat "$T/ctl.log")"
}

ctl_qos() { "$DMSC" -j agent socket "$T/ctl.sock" show qos; }
sr_qos() { "$DMSC" -j agent socket "$T/h2.sock" show qos; }
# The smo's entry for h2: FIELD of it, or -1 while there is none.
h2_at_smo() {
	ctl_qos 2>/dev/null |
		json_get "([x['$1'] for x in d['smo']['nodes'] if x['node'] == 'h2'] or [-1])[0]" 2>/dev/null ||
		echo -1
}

# report_to "smo": the reports ride the SR's mutual-TLS connection to its
# controller, whose smo role keeps each node's last one. What it holds
# equals dmsc telemetry show and the sink; with the controller away the
# reports made are dropped and counted at the SR, and a controller started
# again takes the SR's reports from the next one (a lost report between two
# that arrive is counted missed: agent/daemon/tests/test_roles.c).
test_export_smo() {
	trap case_cleanup EXIT
	setup
	"$PKI" -d "$T/pki" init >/dev/null
	"$PKI" -d "$T/pki" node ctl --roles srd,aam,smo >/dev/null
	"$PKI" -d "$T/pki" node h2 --roles sr >/dev/null
	start_ctl
	notify_listen
	start_agent '{ "node": "h2", "roles": ["sr"], "control": "'"$T"'/h2.sock",
		"tls": { "ca": "'"$T"'/pki/ca.crt", "cert": "'"$T"'/pki/h2.crt", "key": "'"$T"'/pki/h2.key" },
		"sr": { "srd": [ { "node": "ctl", "address": "127.0.0.1:7400" } ] },
		"telemetry": { "devices": [ { "dev": "e0" } ], "prometheus": false,
			"report_interval_ms": 200, "report_to": "smo" } }'
	wait_for "grep -q '^READY=1' '$T/notified'" "no READY=1"
	wait_for "(( \$(h2_at_smo reports) >= 2 ))" "no reports at the smo: $(ctl_qos)" 150

	traffic one 300
	# Two reports after the sink's 5 s of idle: the last has every packet.
	local seq
	# shellcheck disable=SC2034 # read in the wait_for expression
	seq=$(h2_at_smo seq)
	wait_for "(( \$(h2_at_smo seq) >= seq + 2 ))" "no more reports at the smo" 50
	ctl_qos >"$T/qos.json"
	tm -j telemetry show >"$T/show.json"
	sr_qos >"$T/sr-qos.json"
	python3 - "$T" <<'EOF2' || fail "the smo's numbers differ (above)"
import json, sys
T = sys.argv[1]
q = json.load(open(T + "/qos.json"))["smo"]
(h2,) = [x for x in q["nodes"] if x["node"] == "h2"]
sr = json.load(open(T + "/sr-qos.json"))["sr"]
show = json.load(open(T + "/show.json"))
sink = json.load(open(T + "/sink-one.json"))
bad = []
last = h2["last"]
print("smo: h2 reports", h2["reports"], "missed", h2["missed"], "restarts", h2["restarts"],
      "seq", h2["seq"], "age_ms", h2["age_ms"], "| sr:", sr)
if h2["missed"] or h2["restarts"] or q["refused"]:
    bad.append("missed, restarts or refused with the controller up all along")
if sr["report_to"] != "smo" or sr["queued"] + sr["dropped"] != sr["reports"] or sr["queued"] < h2["reports"]:
    bad.append("sr counters %s against the smo's %d reports" % (sr, h2["reports"]))
if h2["seq"] > sr["reports"]:
    bad.append("seq %d beyond the %d reports made" % (h2["seq"], sr["reports"]))
key = lambda x, qpn="qpn": (x["src"], x["sport"], x[qpn])
rq = {key(x): x["total"] for x in last["qps"]}
pq = {key(x): x for x in show[0]["qps"]}
sq = {key(x, "dest_qp"): x for x in sink["qps"]}
if not (set(rq) == set(pq) == set(sq)) or len(rq) != 8:
    bad.append("QPs differ: smo %s show %s sink %s" % (sorted(rq)[:2], sorted(pq)[:2], sorted(sq)[:2]))
else:
    for k in rq:
        for c, sc in (("packets", "packets"), ("bytes", "bytes"), ("lost", "psn_gaps"),
                      ("out_of_order", "out_of_order"), ("duplicates", "duplicates")):
            if not rq[k][c] == pq[k][c] == sq[k][sc]:
                bad.append("QP %s %s: smo %d show %d sink %d" % (k, c, rq[k][c], pq[k][c], sq[k][sc]))
print("smo: h2's last report, 8 QPs, packets", sum(v["packets"] for v in rq.values()),
      "lost", sum(v["lost"] for v in rq.values()))
for b in bad:
    print("BAD", b)
sys.exit(1 if bad else 0)
EOF2

	# The module's tunnel counters ride the same reports: h2 sends 300
	# packets (2 QPs of 150) to h1 through tunnel 7 (SRv6, out e0; h1
	# drops them), and the SMO's last report has that tunnel with the
	# kernel's counts and the sender's.
	ip -n "$h2" -6 addr add fc00:9::2/64 dev e0 nodad
	ip -n "$h1" -6 addr add fc00:9::1/64 dev e0 nodad
	ip -n "$h1" -6 neigh replace fc00:9::2 dev e0 nud permanent \
		lladdr "$(h2x cat /sys/class/net/e0/address)"
	ip -n "$h2" -6 neigh replace fc00:9::1 dev e0 nud permanent \
		lladdr "$(h1x cat /sys/class/net/e0/address)"
	tm tunnel add 7 src fc00:9::2 path fc00:9::1
	tm rule add dst 10.0.9.1/32 tunnel 7
	h2x "$RG" send dst 10.0.9.1 qps 2 count 150 rate 2000 size 200 \
		json "$T/send-tun.json" 2>"$T/send.err" ||
		fail "roce-gen send through the tunnel: $(cat "$T/send.err")"
	# shellcheck disable=SC2034 # read in the wait_for expression
	seq=$(h2_at_smo seq)
	wait_for "(( \$(h2_at_smo seq) >= seq + 2 ))" "no reports after the tunnel's traffic" 50
	ctl_qos >"$T/qos-tun.json"
	tm -s -j tunnel show >"$T/tunnels.json"
	python3 - "$T" <<'EOF3' || fail "the tunnel's counters at the smo differ (above)"
import json, sys
T = sys.argv[1]
q = json.load(open(T + "/qos-tun.json"))["smo"]
(h2,) = [x for x in q["nodes"] if x["node"] == "h2"]
kern = {t["id"]: t for t in json.load(open(T + "/tunnels.json"))}
rep = {t["id"]: t for t in h2["last"].get("tunnels", [])}
sent = json.load(open(T + "/send-tun.json"))["totals"]["packets"]
print("smo: tunnels", rep, "| kernel:", {k: (v.get("packets"), v.get("bytes")) for k, v in kern.items()})
bad = []
if set(rep) != {7} or set(kern) != {7}:
    bad.append("tunnels: smo %s, kernel %s, want [7]" % (sorted(rep), sorted(kern)))
else:
    r, k = rep[7], kern[7]
    if not (r["packets"] == k["packets"] == sent == 300):
        bad.append("packets: smo %s, kernel %s, sent %d" % (r["packets"], k["packets"], sent))
    if r["bytes"] != k["bytes"] or r["bytes"] < sent * 200:
        bad.append("bytes: smo %s, kernel %s" % (r["bytes"], k["bytes"]))
    if r["state"] != "up" or r["active"] != "primary" or len(r["paths"]) != 1 or \
       r["paths"][0]["packets"] != sent:
        bad.append("state/active/paths: %s" % r)
for b in bad:
    print("BAD", b)
sys.exit(1 if bad else 0)
EOF3
	tm rule del dst 10.0.9.1/32
	tm tunnel del 7

	# The controller away: reports are dropped, counted at the SR, the
	# first drop logged; back, they come again.
	local d0 n0
	# shellcheck disable=SC2034 # read in the wait_for and check expressions
	n0=$(grep -c 'telemetry: report to the smo: no connection to the controller' "$T/log" || true)
	kill -TERM "$CTL"
	wait "$CTL" || true
	CTL=""
	# shellcheck disable=SC2034
	d0=$(sr_qos | json_get "d['sr']['dropped']")
	wait_for "(( \$(sr_qos | json_get \"d['sr']['dropped']\") >= d0 + 3 ))" \
		"no report dropped with the controller away: $(sr_qos)" 50
	check "(( \$(grep -c 'telemetry: report to the smo: no connection to the controller' '$T/log') == n0 + 1 ))" \
		"the drop was not logged once: $(grep 'report to the smo' "$T/log")"
	start_ctl
	# The SR backs off up to 5 s between tries.
	wait_for "(( \$(h2_at_smo reports) >= 2 ))" "no reports after the controller came back: $(ctl_qos)" 150
	local rep seq0
	# shellcheck disable=SC2034 # read in the wait_for and check expressions
	rep=$(h2_at_smo reports)
	# shellcheck disable=SC2034
	seq0=$(h2_at_smo seq)
	wait_for "(( \$(h2_at_smo seq) >= seq0 + 2 ))" "reports stopped" 50
	check "(( \$(h2_at_smo missed) == 0 && \$(h2_at_smo reports) >= rep + 2 ))" \
		"the new controller: $(ctl_qos)"
	grep -q 'telemetry: reports reach the smo again' "$T/log" || fail "the recovery was not logged"
	stop_agent
	nothing_left
	dmesg_clean || fail "kernel log has warnings"
}

# A device that cannot be attached: exit 1, the ones before detached.
test_attach_fails() {
	trap case_cleanup EXIT
	setup
	notify_listen
	start_agent '{ "node": "h2", "roles": ["sr"], "telemetry": {
		"devices": [ { "dev": "e0" }, { "dev": "nosuch0" } ] } }'
	local rc=0
	wait "$AG" || rc=$?
	AG=""
	sed 's/^/agent: /' "$T/log"
	check "(( rc == 1 ))" "exit status $rc"
	grep -q 'dev "nosuch0": no such device' "$T/log" || fail "no error naming the device"
	grep -q 'telemetry: detached e0 ingress' "$T/log" || fail "e0 not detached"
	check "[ ! -s '$T/notified' ]" "READY=1 although it failed: $(cat "$T/notified")"
	nothing_left
	# And a configuration error names the field.
	echo '{ "node": "h2", "roles": ["sr"], "telemetry": { "devices": [ { "dev": "e0", "direction": "in" } ] } }' >"$T/bad.json"
	local out
	out=$("$AGENT" -c "$T/bad.json" --check 2>&1) && fail "--check passed a bad direction"
	[[ "$out" == *'telemetry.devices[0].direction: expected "ingress" or "egress"'* ]] ||
		fail "error: $out"
}

for tool in "$AGENT" "$DMSC" "$RG" bpftool python3 curl nsenter setpriv; do
	command -v "$tool" >/dev/null || { echo "1..0 # SKIP no $tool"; exit 4; }
done
dmesg_mark
backlog=$(sysctl -n net.core.netdev_max_backlog)
sysctl -qw net.core.netdev_max_backlog=100000
trap 'cleanup_ns; sysctl -qw net.core.netdev_max_backlog=$backlog' EXIT
ktap_run test_export "agent: /metrics and type-5 reports equal show and the sink, through a re-attach; SIGTERM leaves nothing" \
	test_export_smo "agent: type-5 reports over mutual TLS to the controller's smo equal show and the sink; dropped and counted while it is away" \
	test_not_its_own "agent: an attachment it did not make is read and left in place" \
	test_attach_fails "agent: a device that cannot be attached: exit 1, the others detached, no READY=1"
