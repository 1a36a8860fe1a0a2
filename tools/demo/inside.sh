#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo, inside the VM: load the module, make two namespaces (two
# nodes) and show that each has its own dmsc state.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
dmsc=$top/agent/dmsc
ko=$top/build/kmod/$(uname -r)/kernel/dmsc.ko

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "kernel $(uname -r): insmod dmsc.ko"
insmod "$ko"
ip netns add aidc1
ip netns add aidc2
trap 'ip netns del aidc1; ip netns del aidc2; rmmod dmsc' EXIT

say "each namespace is a node with its own settings"
ip netns exec aidc1 "$dmsc" set flow_limit 4096
ip netns exec aidc2 "$dmsc" set flow_limit 8192 flow_timeout 5000
for ns in aidc1 aidc2; do
	say "ip netns exec $ns dmsc -j info"
	ip netns exec "$ns" "$dmsc" -j -p info
done
