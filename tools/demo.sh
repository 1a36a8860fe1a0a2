#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: boot a VM with Debian's kernel, load dmsc.ko and steer RoCEv2
# between two AIDCs over an SRv6 WAN: tools/demo/inside.sh in the guest;
# then an incast through cbfc, through pfifo, and through cbfc with the
# PE1 - P link going down mid-transfer, plotted with gnuplot to
# build/demo/incast.png.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kver=${DEMO_KVER:-$("$top/tools/vm/kernels.sh" -d)}
out=$top/build/demo
mkdir -p "$out"
rm -f "$out"/*.dat "$out"/*.t "$out/incast.png"
"$top/tools/vm/run.sh" -k "$kver" -m 2048 -t 1500 -o "$out" -e DMSC_INCAST_OUT="$out" -- "$top/tools/demo/inside.sh"
gnuplot -e "dir='$out'; rate=${DMSC_INCAST_RATE:-4}" "$top/tools/demo/incast.gp"
echo "plot of the incast, goodput per QP over time: $out/incast.png"
