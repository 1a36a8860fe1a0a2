#!/bin/bash
# Self-test of the VM harness on every kernel we test on (kernels.sh):
# the guest runs the right kernel, exit status comes back, namespaces, veth,
# seg6 and seg6local work, module autoloading works, an unsigned out-of-tree
# module loads, lockdown is off, -o shares a writable directory.
# Prints KTAP-like "ok"/"not ok" lines and exits non-zero on any failure.
#
#   selftest.sh [KVER...]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
run=$here/run.sh
work=${DMSC_VM_CACHE:-$top/build/vm}/selftest
failed=0
n=0

check() {
	local name=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n $name"
	else
		echo "not ok $n $name"
		failed=$((failed + 1))
	fi
}

# A minimal module, built against the kernel's headers like dmsc.ko is.
build_module() {
	local kver=$1 dir=$work/$1
	mkdir -p "$dir"
	cat >"$dir/vmtest.c" <<-'EOF'
		#include <linux/module.h>
		static int __init vmtest_init(void) { pr_info("vmtest: loaded\n"); return 0; }
		static void __exit vmtest_exit(void) { }
		module_init(vmtest_init);
		module_exit(vmtest_exit);
		MODULE_LICENSE("GPL");
	EOF
	echo 'obj-m := vmtest.o' >"$dir/Makefile"
	make -C "/lib/modules/$kver/build" M="$dir" modules >"$dir/build.log" 2>&1 ||
		{ cat "$dir/build.log" >&2; return 1; }
}

# Everything the tests need from inside one boot, to keep it to one VM each.
# shellcheck disable=SC2016 # expanded in the guest
guest_script='
set -e
ip netns add a
ip -n a link add v0 type veth peer name v1
ip -6 route add fc00::/64 encap seg6 mode encap segs fc00::1 dev lo
ip link add d0 type dummy
ip link set d0 up
ip -6 route add fc00:1::100/128 encap seg6local action End dev d0
modprobe ip6_tunnel
grep -q "\[none\]" /sys/kernel/security/lockdown
insmod "$MOD"
dmesg | grep -q "vmtest: loaded"
echo ok >"$OUT/written"
'

if [ $# -gt 0 ]; then
	kvers=("$@")
else
	mapfile -t kvers < <("$here/kernels.sh")
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/dmsc-vm-selftest.XXXXXX")
trap 'rm -rf "$out"' EXIT

for kver in "${kvers[@]}"; do
	t0=$(date +%s.%N)
	got=$("$run" -k "$kver" -- uname -r)
	t1=$(date +%s.%N)
	echo "# $kver: boot + uname -r + power-off: $(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s"
	check "$kver uname" [ "$got" = "$kver" ]
	rc=0
	"$run" -k "$kver" -- sh -c 'exit 3' || rc=$?
	check "$kver exit status" [ "$rc" = 3 ]
	check "$kver module build" build_module "$kver"
	check "$kver netns veth seg6 seg6local modprobe insmod -o" \
		"$run" -k "$kver" -o "$out/$kver" -e MOD="$work/$kver/vmtest.ko" \
		-e OUT="$out/$kver" -- sh -c "$guest_script"
	check "$kver -o written" [ "$(cat "$out/$kver/written" 2>/dev/null)" = ok ]
done
echo "# $((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
