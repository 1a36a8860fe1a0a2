#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The SRD at scale, issue 10's figures, on the host (no VM: no kernel
# part): agent/daemon/tests/bench_registry (SRS SR connections over mutual
# TLS to one dmsc-agent in roles srd+aam, INSTANCES registered and
# renewing, CHANGES timed pushes), then etcd's own watch latency with as
# many watchers on the same machine (tools/bench/etcd_watch.py), and the
# two p99s side by side.
#
# usage: tools/bench/registry.sh [SRS [INSTANCES [CHANGES]]]
#        defaults 100 10000 50; builds what it needs.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
srs=${1:-100}
mis=${2:-10000}
changes=${3:-50}

make -s -C "$top/agent" bench-registry >/dev/null
echo "# registry bench: $(nproc) cpu, load $(cut -d' ' -f1-3 /proc/loadavg), $srs SRs, $mis instances, $changes changes"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$top/agent/daemon/tests/bench_registry" "$top/agent/dmsc-agent" \
	"$top/tools/pki/dmsc-pki" "$srs" "$mis" "$changes" | tee "$out"
python3 "$top/tools/bench/etcd_watch.py" "$srs" "$changes" | tee -a "$out"
# p99 of the SRD's pushes over p99 of etcd's watch events
awk '/^push latency:/ { for (i = 1; i <= NF; i++) if ($i == "p99") s = $(i + 1) }
     /watch latency:/ { for (i = 1; i <= NF; i++) if ($i == "p99") e = $(i + 1) }
     END { if (s && e) printf "srd p99 / etcd watch p99: %.2f\n", s / e }' "$out"
