#!/bin/bash
# Install every Debian package dmsc needs to build, test and demo.
# Idempotent: packages already present are left alone; run as root.
#
#   install-deps.sh           what make check needs
#   install-deps.sh --debug   what building the debug kernel of make
#                             check-debug needs (tools/vm/debug-kernel.sh)
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive

pkgs=(
	build-essential pkg-config make gcc clang llvm libclang-rt-dev
	libnl-3-dev libnl-genl-3-dev libnl-route-3-dev libjson-c-dev libsystemd-dev
	libbpf-dev bpftool libglpk-dev glpk-utils coinor-clp libmnl-dev libelf-dev zlib1g-dev
	libmicrohttpd-dev curl openssl libssl-dev python3-jwt python3-cryptography
	libsqlite3-dev libevent-dev libcurl4-openssl-dev etcd-server etcd-client
	qemu-system-x86 busybox-static kmod cpio xz-utils zstd
	iproute2 nftables tshark tcpdump iputils-ping util-linux procps dkms jq gnuplot-nox
	linux-image-amd64 linux-headers-amd64 linux-source-6.1 linux-source-6.12
	python3 python3-yaml python3-jsonschema groff-base man-db
)

# Only for make check-debug: a kernel build from linux-source.
debug_pkgs=(
	linux-source-6.12 bc bison flex libssl-dev libelf-dev dwarves
	build-essential xz-utils util-linux
)

newest_612() {
	apt-cache search --names-only "^linux-$1-6\.12\.[0-9]+\+deb12-amd64\$" |
		awk '{print $1}' | sort -V | tail -n 1
}

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: run as root (apt-get install)" >&2
	exit 1
fi

missing() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || echo "$p"
	done
}

if [ "${1:-}" = --debug ]; then
	todo=$(missing "${debug_pkgs[@]}")
	if [ -n "$todo" ]; then
		apt-get update -qq
		# shellcheck disable=SC2086
		apt-get install -y -qq --no-install-recommends $todo
	fi
	echo "install-deps: debug kernel build dependencies present"
	exit 0
fi

# The 6.12 kernel has no meta package in bookworm: take the newest one,
# unless some 6.12 image and its headers are already installed.
if ! ls /boot/vmlinuz-6.12.*+deb12-amd64 >/dev/null 2>&1 ||
   ! ls -d /usr/src/linux-headers-6.12.*+deb12-amd64 >/dev/null 2>&1; then
	need_update=1
else
	need_update=0
fi

todo=$(missing "${pkgs[@]}")
if [ -n "$todo" ] || [ "$need_update" = 1 ]; then
	apt-get update -qq
	if [ "$need_update" = 1 ]; then
		img=$(newest_612 image)
		hdr=$(newest_612 headers)
		[ -n "$img" ] && [ -n "$hdr" ] || {
			echo "install-deps: no linux 6.12 image/headers in apt" >&2
			exit 1
		}
		todo="$todo $img $hdr"
	fi
	# Debian's tshark asks whether non-root may capture: answer no.
	echo "wireshark-common wireshark-common/install-setuid boolean false" |
		debconf-set-selections
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $todo
fi

# linux-source ships as a tarball; checkpatch.pl is all we need from it.
if [ ! -x /usr/src/linux-source-6.1/scripts/checkpatch.pl ]; then
	tar -C /usr/src -xf /usr/src/linux-source-6.1.tar.xz \
		linux-source-6.1/scripts linux-source-6.1/tools/testing/selftests/kselftest.h \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h
fi
# The kernel's YNL tooling and its netlink schemas, which our spec is
# checked against (tools/ynl-check.py, selftests).
if [ ! -f /usr/src/linux-source-6.12/tools/net/ynl/cli.py ] ||
	[ ! -f /usr/src/linux-source-6.12/Documentation/netlink/genetlink-legacy.yaml ]; then
	tar -C /usr/src -xf /usr/src/linux-source-6.12.tar.xz --wildcards \
		'linux-source-6.12/tools/net/ynl/*' \
		'linux-source-6.12/Documentation/netlink/*.yaml'
fi
echo "install-deps: all dependencies present"
