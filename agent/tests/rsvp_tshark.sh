#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tshark decodes every RSVP-CBFC message we send as RSVP: tests/rsvp_pcap
# writes PATH, RESV (MB and cumulative Credit), PathTear and PathErr over
# IPv4 and IPv6; each frame must show its message type, SESSION, HOP (not
# PathErr: it has none), SENDER_TEMPLATE or FILTER_SPEC, a correct
# checksum, our private objects whole, and tshark's expert must have no
# error or warning (a wrong object length shows as "Malformed").
#   rsvp_tshark.sh RSVP_PCAP [-b]   (-b: a wrong Credit length, must fail)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../../tools/ktap.sh
. "$here/../tools/ktap.sh"

gen=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! command -v tshark >/dev/null; then
	ktap_plan 1
	ktap_skip "rsvp tshark" "no tshark"
	ktap_done
	exit 0
fi
ktap_plan 11
"$gen" "$@" "$work/r.pcap" || exit 1
tshark -V -r "$work/r.pcap" 2>/dev/null >"$work/all.txt"
# One file per frame.
awk -v d="$work" '/^Frame [0-9]+:/ { f = d "/f" $2; sub(":", "", f) } f { print > f }' \
	"$work/all.txt"

# Frame: type as tshark names it, sender object, private objects.
frames=(
	"1 Unknown (28)|SENDER TEMPLATE|1"
	"2 Unknown (29)|FILTERSPEC|2"
	"3 Unknown (29)|FILTERSPEC|2"
	"4 PATH TEAR Message|SENDER TEMPLATE|1"
	"5 PATH ERROR Message|SENDER TEMPLATE|1"
	"6 Unknown (28)|SENDER TEMPLATE|1"
	"7 Unknown (29)|FILTERSPEC|2"
	"8 Unknown (29)|FILTERSPEC|2"
	"9 PATH TEAR Message|SENDER TEMPLATE|1"
	"10 PATH ERROR Message|SENDER TEMPLATE|1"
)
for e in "${frames[@]}"; do
	n=${e%% *}
	rest=${e#* }
	IFS='|' read -r type sender priv <<<"$rest"
	f=$work/f$n
	fam=IPv4
	[ "$n" -gt 5 ] && fam=IPv6
	why=
	head=$(grep -m1 '^Resource ReserVation Protocol (RSVP): ' "$f" 2>/dev/null)
	[[ $head == *"RSVP): $type. SESSION: "*". $sender: "* ]] ||
		why+="summary \"$head\"; "
	grep -q 'Message Checksum: 0x[0-9a-f]* \[correct\]' "$f" ||
		why+="checksum not correct; "
	if [[ $type != "PATH ERROR Message" ]]; then
		grep -q 'Object class: HOP object (3)' "$f" || why+="no HOP; "
	else
		grep -q 'Object class: ERROR object (6)\|ERROR' "$f" || why+="no ERROR_SPEC; "
	fi
	got=$(grep -c 'Enterprise Code: .*(32473)' "$f")
	[ "$got" = "$priv" ] || why+="$got private objects, want $priv; "
	if grep -q 'Malformed\|Expert Info\|Unknown object' "$f"; then
		why+="tshark: $(grep -m1 'Malformed\|Expert Info\|Unknown object' "$f" | sed 's/^ *//'); "
	fi
	ktap_result "$([ -z "$why" ] && echo 0 || echo 1)" \
		"tshark frame $n: $fam ${type}" "$why"
done
expert=$(tshark -r "$work/r.pcap" -q -z expert 2>/dev/null | grep -E '^ +[0-9]+ ')
ktap_result "$([ -z "$expert" ] && echo 0 || echo 1)" \
	"tshark expert: no error or warning in 10 frames" "$expert"
ktap_done
