#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: boot a VM with Debian's kernel, load dmsc.ko and steer RoCEv2
# between two AIDCs over an SRv6 WAN: tools/demo/inside.sh in the guest.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kver=${DEMO_KVER:-$("$top/tools/vm/kernels.sh" -d)}
exec "$top/tools/vm/run.sh" -k "$kver" -m 2048 -t 900 -- "$top/tools/demo/inside.sh"
