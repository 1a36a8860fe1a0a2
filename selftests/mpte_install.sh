#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The MPTE solver's output goes into the kernel as it is: solve a small
# instance, turn the result into dmsc -batch lines (dmsc mpte batch),
# apply them in a namespace and read the tunnels back: one per admitted
# demand, each holding exactly the solver's segment lists (SIDs in order),
# weights and backup.
#
#            +---- C ----+        A-C, C-B 300; A-D, D-B, A-E, E-B 100
#            |           |        (both directions), IGP metric 1:
#     A -----+---- D ----+----- B A-B is a three-way tie, so every list
#            |           |        names its middle node, then the egress
#            +---- E ----+
#
#   ab: A->B 200, max_paths 2, link protection: two unequal lists and a
#       link-disjoint backup over the third middle node
#   ba: B->A 90: three unequal lists
#   cd: C->D 10: one list
#   xx: A->B 5000: rejected, no tunnel
source "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
trap 'cleanup_ns; rm -rf "$T"' EXIT

write_instance() {
	cat >"$T/topo.json" <<'EOF'
{"nodes": [
  {"name": "A", "sid": "fc00:a::"}, {"name": "B", "sid": "fc00:b::"},
  {"name": "C", "sid": "fc00:c::"}, {"name": "D", "sid": "fc00:d::"},
  {"name": "E", "sid": "fc00:e::"}],
 "links": [
  {"from": "A", "to": "C", "capacity": 300}, {"from": "C", "to": "B", "capacity": 300},
  {"from": "A", "to": "D", "capacity": 100}, {"from": "D", "to": "B", "capacity": 100},
  {"from": "A", "to": "E", "capacity": 100}, {"from": "E", "to": "B", "capacity": 100}]}
EOF
	cat >"$T/demands.json" <<'EOF'
{"demands": [
  {"id": "ab", "ingress": "A", "egress": "B", "bandwidth": 200, "max_paths": 2,
   "protection": "link", "setup_priority": 3},
  {"id": "ba", "ingress": "B", "egress": "A", "bandwidth": 90},
  {"id": "xx", "ingress": "A", "egress": "B", "bandwidth": 5000},
  {"id": "cd", "ingress": "C", "egress": "D", "bandwidth": 10}]}
EOF
}

# compare RESULT SHOW BASE SRC: the kernel's tunnels (dmsc -j tunnel show)
# against the solver's result; prints each difference, fails on any.
compare() {
	python3 - "$@" <<'EOF'
import json, sys
res = json.load(open(sys.argv[1]))
show = json.load(open(sys.argv[2]))
base, src = int(sys.argv[3]), sys.argv[4]
kernel = {t["id"]: t for t in show}
bad = []
want = set()
for i, d in enumerate(res["demands"]):
    tid = base + i
    if d["status"] != "admitted":
        if tid in kernel:
            bad.append("%s (%s) has tunnel %d" % (d["id"], d["status"], tid))
        continue
    want.add(tid)
    t = kernel.get(tid)
    if t is None:
        bad.append("%s: no tunnel %d" % (d["id"], tid))
        continue
    if t.get("src") != src:
        bad.append("tunnel %d: src %s" % (tid, t.get("src")))
    got = [(p["segs"], p["weight"]) for p in t["paths"]]
    exp = [(p["segments"], p["weight"]) for p in d["paths"]]
    if got != exp:
        bad.append("tunnel %d (%s): kernel %s, solver %s" % (tid, d["id"], got, exp))
    kb = t.get("backup", {}).get("segs") if t.get("backup") else None
    sb = d["backup"]["segments"] if d.get("backup") else None
    if kb != sb:
        bad.append("tunnel %d (%s): backup kernel %s, solver %s" % (tid, d["id"], kb, sb))
    print("# tunnel %d %s: %s backup %s" % (tid, d["id"], got, kb))
extra = set(kernel) - want
if extra:
    bad.append("tunnels no admitted demand asked for: %s" % sorted(extra))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
}

# The instance must exercise what the test is for, or it proves nothing.
instance_has() {	# instance_has RESULT: unequal weights, a backup, a reject
	python3 - "$1" <<'EOF'
import json, sys
d = {x["id"]: x for x in json.load(open(sys.argv[1]))["demands"]}
w = [p["weight"] for p in d["ab"]["paths"]]
ok = (len(w) == 2 and w[0] != w[1] and d["ab"].get("backup")
      and len(d["ba"]["paths"]) == 3 and d["xx"]["status"] == "rejected"
      and all(x.get("installable", True) for x in d.values()))
print("# ab weights %s backup %s; ba %d lists; xx %s" % (w, d["ab"].get("backup", {}).get("segments"),
      len(d["ba"]["paths"]), d["xx"]["status"]))
sys.exit(0 if ok else 1)
EOF
}

test_install_exact() {
	local a
	mkns a	# sets $a to the namespace's name
	write_instance
	"$DMSC" -j mpte solve --topology "$T/topo.json" \
		--demands "$T/demands.json" >"$T/result.json"
	check "instance_has '$T/result.json'" \
		"the solved instance lacks unequal weights, a backup or a reject"
	"$DMSC" mpte batch --result "$T/result.json" --src fc00::1 \
		--tunnel-id 100 >"$T/batch"
	sed 's/^/# batch: /' "$T/batch"
	"$DMSC" -n "$a" -batch "$T/batch"
	"$DMSC" -n "$a" -j tunnel show >"$T/show.json"
	check "compare '$T/result.json' '$T/show.json' 100 fc00::1" \
		"the kernel does not hold the solver's lists (see above)"
	local n
	n=$("$DMSC" -n "$a" -j tunnel show | json_get 'len(d)')
	check "(( n == 3 ))" "$n tunnels, not 3 (ab, ba, cd; xx rejected)"
}

# The same result installed twice at another id base and source: the ids
# and the source are the operator's, the lists still the solver's.
test_install_base_src() {
	local b
	mkns b	# sets $b to the namespace's name
	write_instance
	"$DMSC" -j mpte solve --topology "$T/topo.json" \
		--demands "$T/demands.json" >"$T/result.json"
	"$DMSC" mpte batch --result "$T/result.json" --src 2001:db8::7 \
		--tunnel-id 4000000000 >"$T/batch"
	"$DMSC" -n "$b" -batch "$T/batch"
	"$DMSC" -n "$b" -j tunnel show >"$T/show.json"
	check "compare '$T/result.json' '$T/show.json' 4000000000 2001:db8::7" \
		"the kernel does not hold the solver's lists at base 4000000000"
}

# A result the data plane cannot take writes nothing: no half-installed set.
test_not_installable() {
	write_instance
	# D has no SID: lists through D cannot be installed
	sed -i 's/{"name": "D", "sid": "fc00:d::"}/{"name": "D"}/' "$T/topo.json"
	"$DMSC" -j mpte solve --topology "$T/topo.json" \
		--demands "$T/demands.json" >"$T/result.json"
	local rc=0
	"$DMSC" mpte batch --result "$T/result.json" --src fc00::1 \
		--tunnel-id 1 >"$T/batch" 2>"$T/err" || rc=$?
	sed 's/^/# stderr: /' "$T/err"
	check "(( rc == 1 ))" "batch of a non-installable result: exit $rc, not 1"
	check "[ ! -s '$T/batch' ]" "batch wrote lines for a non-installable result"
	check "grep -q 'not installable: .*node D' '$T/err'" "the error does not name node D"
}

test_dmesg() {
	dmesg_clean || fail "kernel log has warnings (see above)"
}

dmesg_mark
load_module
ktap_run \
	test_install_exact "solver lists, weights and backup land in the kernel as solved" \
	test_install_base_src "tunnel ids and source address are the operator's" \
	test_not_installable "a non-installable result writes no batch" \
	test_dmesg "kernel log is clean"
