#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dmsc.ko loads, registers its family, and unloads cleanly, also with
# namespaces coming and going around it.
source "$(dirname "$0")/lib.sh"

expected_version=$(sed -n 's/^#define DMSC_VERSION "\(.*\)"/\1/p' \
	"$top/kernel/version.h")

test_load() {
	unload_module
	insmod "$DMSC_KO"
	check "[ -d /sys/module/dmsc ]" "no /sys/module/dmsc after insmod"
	local v
	v=$("$DMSC" -j info | json_get 'd["version"]')
	check "[ '$v' = '$expected_version' ]" \
		"module says version '$v', source says '$expected_version'"
	check "[ \"\$(cat /sys/module/dmsc/version)\" = '$expected_version' ]" \
		"MODULE_VERSION differs"
}

test_unload() {
	load_module
	rmmod dmsc
	check "[ ! -d /sys/module/dmsc ]" "module still there"
	local out
	if out=$("$DMSC" info 2>&1); then
		fail "dmsc info worked without the module"
	fi
	check "[[ '$out' == *'not found'* ]]" "unexpected error: $out"
}

# Namespaces made before the load must get state; ones deleted while
# loaded must free it; unload with namespaces alive must free theirs.
test_netns_churn() {
	local round
	for round in 1 2 3; do
		unload_module
		mkns early
		insmod "$DMSC_KO"
		mkns late
		dns "$early" set flow_limit $((round * 10))
		dns "$late" set flow_limit $((round * 20))
		check "(( \$(dns $early -j info | json_get 'd[\"flow_limit\"]') == round * 10 ))"
		ip netns del "$late"
		rmmod dmsc
		cleanup_ns
	done
	load_module
}

test_dmesg() {
	dmesg_clean || fail "kernel log has warnings (see above)"
}

dmesg_mark
ktap_run \
	test_load "module loads and reports its version" \
	test_unload "family is gone after unload" \
	test_netns_churn "load and unload around namespace churn" \
	test_dmesg "kernel log is clean"
