#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make install into a staging DESTDIR installs exactly the files it should
# (binaries that run, man pages, the systemd unit, the module source DKMS
# builds from), and make uninstall takes every one of them away. KTAP; run
# by tools/check.sh after the agent is built. Touches nothing outside the
# temporary directory: with DESTDIR set, install neither calls dkms nor
# systemctl.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")

. "$top/tools/ktap.sh"

# The files a DESTDIR install must hold, relative to it, sorted.
expected() {
	local f
	{
		printf '%s\n' usr/sbin/dmsc usr/sbin/dmsc-agent usr/sbin/dmsc-pki \
			usr/sbin/dmsc-rsvp \
			usr/share/man/man8/dmsc.8 usr/share/man/man8/dmsc-agent.8 \
			lib/systemd/system/dmsc-agent.service \
			usr/lib/x86_64-linux-gnu/tc/q_cbfc.so
		# The module source: what git tracks of it (the tree itself
		# when it is not a checkout), never a build product.
		cd "$top" || return 1
		for f in dkms.conf Kbuild kernel/Kbuild kernel/*.[ch] uapi/linux/*.h; do
			case $f in *.mod.c) continue ;; esac
			if git rev-parse --git-dir >/dev/null 2>&1 &&
			   ! git ls-files --error-unmatch "$f" >/dev/null 2>&1; then
				continue
			fi
			echo "usr/src/dmsc-$ver/$f"
		done
	} | sort
}

installed() {	# every file and symlink under DESTDIR, sorted
	(cd "$1" && find . \( -type f -o -type l \) -printf '%P\n' | sort)
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/root

ktap_plan 7
make -s --no-print-directory -C "$top" install DESTDIR="$dest" >"$tmp/log" 2>&1
ktap_result $? "make install DESTDIR=... succeeds" || sed 's/^/# /' "$tmp/log"

want=$(expected)
got=$(installed "$dest")
[ "$got" = "$want" ]
ktap_result $? "it installs exactly the $(echo "$want" | wc -l) expected files" ||
	diff <(echo "$want") <(echo "$got") | sed 's/^/# /'

# Binaries: executable by all, they run and say what they are.
v=$("$dest/usr/sbin/dmsc" -V 2>&1)
[ "$(stat -c %a "$dest/usr/sbin/dmsc")" = 755 ] &&
	[ "$(stat -c %a "$dest/usr/sbin/dmsc-agent")" = 755 ] &&
	[[ $v == *"$ver"* ]] &&
	"$dest/usr/sbin/dmsc-agent" --help | grep -q '^Usage: dmsc-agent'
ktap_result $? "dmsc and dmsc-agent are mode 755 and run (dmsc -V: $v)"

# Man pages and the module source are plain files, readable by all; the
# source is the tree's, byte for byte.
bad=$(cd "$dest" && find usr/share/man usr/src lib -type f ! -perm 644 | tr "\n" " ")
same=0
for f in $(cd "$dest/usr/src/dmsc-$ver" && find . -type f); do
	cmp -s "$top/$f" "$dest/usr/src/dmsc-$ver/$f" || { same=1; echo "# differs: $f"; }
done
[ -z "$bad" ] && [ "$same" = 0 ]
ktap_result $? "man pages, unit and module source are mode 644 and the tree's own${bad:+ # not 644: $bad}"

# The unit starts the installed binary with the documented config path.
unit=$dest/lib/systemd/system/dmsc-agent.service
grep -qx 'ExecStart=/usr/sbin/dmsc-agent -c /etc/dmsc/agent.json' "$unit" &&
	grep -qx 'Type=notify' "$unit" && ! grep -qE '@[A-Z]+@' "$unit"
ktap_result $? "dmsc-agent.service runs /usr/sbin/dmsc-agent -c /etc/dmsc/agent.json, Type=notify"

# systemd's own verdict on the unit, as it would load it with the staged
# files in place: verify wants the ExecStart binary to exist and runs man
# for each Documentation= page (--root would want a whole systemd too).
if command -v systemd-analyze >/dev/null; then
	sed "s|=/usr/sbin/|=$dest/usr/sbin/|" "$unit" >"$tmp/dmsc-agent.service"
	out=$(MANPATH=$dest/usr/share/man systemd-analyze verify \
		"$tmp/dmsc-agent.service" 2>&1)
	rc=$?
	[ "$rc" = 0 ] && [ -z "$out" ]
	ktap_result $? "systemd-analyze verify accepts dmsc-agent.service" ||
		printf '%s\n' "$out" | sed 's/^/# /'
else
	ktap_skip "systemd-analyze verify" "no systemd-analyze"
fi

make -s --no-print-directory -C "$top" uninstall DESTDIR="$dest" >"$tmp/log" 2>&1
rc=$?
left=$(installed "$dest")
[ "$rc" = 0 ] && [ -z "$left" ] && [ ! -e "$dest/usr/src/dmsc-$ver" ]
ktap_result $? "make uninstall DESTDIR=... leaves no file" ||
	{ sed 's/^/# /' "$tmp/log"; printf '%s\n' "$left" | sed 's/^/# left: /'; }

ktap_done
