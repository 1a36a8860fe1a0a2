#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Inside the test VM: run a command and count the static keys flipped while
# it ran (a kprobe on jump_label_update, the addresses named through
# /proc/kallsyms). Every flip patches kernel text, which QEMU's TCG has
# raced with traffic on the other vCPU (selftests/vm_pin_keys.sh). E.g.
#   tools/vm/run.sh -k 6.12 -s -- tools/vm/key-flips.sh \
#	selftests/run_tests.sh telemetry.sh
# prints "flips: N SYMBOL+OFFSET" per key after the command's output and
# exits with the command's status.
set -u
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T || exit 1
echo 'p:dmsc_jlu jump_label_update key=%di' >>$T/kprobe_events || exit 1
echo 1 >$T/events/kprobes/dmsc_jlu/enable
echo >$T/trace
"$@"
rc=$?
echo 0 >$T/events/kprobes/dmsc_jlu/enable
grep -o 'key=0x[0-9a-f]*' $T/trace | python3 -c '
import bisect, collections, sys
keys = collections.Counter(int(l.split("=0x")[1], 16) for l in sys.stdin)
syms = sorted((int(a, 16), n) for a, _, n, *_ in
              (l.split() for l in open("/proc/kallsyms")) if int(a, 16))
addrs = [a for a, _ in syms]
for k, n in sorted(keys.items()):
    i = bisect.bisect_right(addrs, k) - 1
    print("flips: %d %s+0x%x" % (n, syms[i][1], k - syms[i][0]))'
echo '-:dmsc_jlu' >>$T/kprobe_events
exit $rc
