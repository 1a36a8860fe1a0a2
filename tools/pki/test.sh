#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Tests of tools/pki/dmsc-pki, with real TLS 1.3 handshakes: openssl's
# s_server asks for a client certificate and checks it against the CA and
# its revocation list, as an agent will; a client whose certificate it
# takes gets its line back reversed (s_server -rev), any other gets an
# alert. KTAP on stdout.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../ktap.sh
. "$here/../ktap.sh"
pki=$here/dmsc-pki
tmp=$(mktemp -d)
srv_pid=
cleanup() {
	[ -z "$srv_pid" ] || kill "$srv_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
d=$tmp/ca

ktap_plan 14

# handshake CLIENT_ARGS...: one TLS 1.3 connection to a server holding
# srv.crt that requires a client certificate. Prints what came back and
# the alert, if any; the reply is the test, not the exit code (the client
# is ended by timeout once it has its answer).
handshake() {
	local port

	: >"$tmp/s.out"
	openssl s_server -rev -accept 127.0.0.1:0 -naccept 1 -tls1_3 \
		-cert "$d/srv.crt" -key "$d/srv.key" -CAfile "$d/ca.crt" \
		-Verify 1 -verify_return_error -CRL "$d/crl.pem" -crl_check \
		>"$tmp/s.out" 2>&1 &
	srv_pid=$!
	for _ in $(seq 100); do
		port=$(sed -n 's/^ACCEPT 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$tmp/s.out")
		[ -n "$port" ] && break
		sleep 0.05
	done
	(echo dmsc-hello; sleep 1) | timeout 4 openssl s_client -quiet -tls1_3 \
		-connect "127.0.0.1:$port" -verify_return_error "$@" \
		>"$tmp/c.out" 2>"$tmp/c.err"
	kill "$srv_pid" 2>/dev/null
	wait "$srv_pid" 2>/dev/null
	srv_pid=
	echo "reply=$(cat "$tmp/c.out")"
	sed -n 's/.*ssl3_read_bytes:\(.*alert [a-z ]*\):.*/\1/p' "$tmp/c.err" | head -1
	grep -o 'verify error:num=[0-9]*:.*' "$tmp/c.err" | head -1
}

out=$("$pki" -d "$d" init 2>&1) &&
	"$pki" -d "$d" node srv --roles srd,smo >/dev/null &&
	"$pki" -d "$d" node pe1 --roles sr --san 10.0.0.1 --san pe1.example >/dev/null &&
	"$pki" -d "$d" node old --roles sr --expired >/dev/null &&
	"$pki" -d "$d" node gone --roles sr >/dev/null &&
	"$pki" -d "$d" revoke gone >/dev/null
ktap_result $? "init, four node certificates and a revocation" || ktap_diag "$out"

want=$'node pe1\nrole sr'
got=$("$pki" -d "$d" show pe1 | grep -E '^(node|role) ')
[ "$got" = "$want" ]
ktap_result $? "a node certificate names its node and roles (urn:dmsc:node, urn:dmsc:role)" ||
	ktap_diag "got: $got"

text=$(openssl x509 -in "$d/pe1.crt" -noout -text)
got=$(grep -c 'Signature Algorithm: ED25519$' <<<"$text")
got+=" $(grep -c 'Public Key Algorithm: ED25519$' <<<"$text")"
got+=" $(grep -c 'TLS Web Server Authentication, TLS Web Client Authentication$' <<<"$text")"
got+=" $(grep -c 'URI:urn:dmsc:role:sr, IP Address:10.0.0.1, DNS:pe1.example$' <<<"$text")"
[ "$got" = "2 1 1 1" ]
ktap_result $? "Ed25519 keys and signatures, server and client use, the extra SANs" ||
	ktap_diag "lines found in openssl x509 -text: $got, want 2 1 1 1"

r=$(handshake -CAfile "$d/ca.crt" -cert "$d/pe1.crt" -key "$d/pe1.key")
[ "$r" = "reply=olleh-csmd" ]
ktap_result $? "mutual TLS 1.3: a valid node certificate is accepted" || ktap_diag "$r"

r=$(handshake -CAfile "$d/ca.crt" -cert "$d/old.crt" -key "$d/old.key")
[[ $r == $'reply=\nsslv3 alert certificate expired'* ]]
ktap_result $? "an expired certificate is refused (alert certificate expired)" || ktap_diag "$r"

r=$(handshake -CAfile "$d/ca.crt" -cert "$d/gone.crt" -key "$d/gone.key")
[[ $r == $'reply=\nsslv3 alert certificate revoked'* ]]
ktap_result $? "a revoked certificate is refused (alert certificate revoked)" || ktap_diag "$r"

r=$(handshake -CAfile "$d/ca.crt")
[[ $r == $'reply=\ntlsv13 alert certificate required'* ]]
ktap_result $? "a client without a certificate is refused (alert certificate required)" ||
	ktap_diag "$r"

# Another CA's node: a stranger, not a member of this mesh.
other=$tmp/other
"$pki" -d "$other" init >/dev/null && "$pki" -d "$other" node pe1 --roles sr >/dev/null
r=$(handshake -CAfile "$d/ca.crt" -cert "$other/pe1.crt" -key "$other/pe1.key")
[[ $r == $'reply=\n'*'alert unknown ca'* ]]
ktap_result $? "a certificate from another CA is refused (alert unknown ca)" || ktap_diag "$r"

# And the other way: a client that trusts only the other CA refuses our
# server.
r=$(handshake -CAfile "$other/ca.crt" -cert "$other/pe1.crt" -key "$other/pe1.key")
[[ $r == $'reply=\nverify error:num='* ]]
ktap_result $? "a client refuses a server its CA did not sign" || ktap_diag "$r"

got=$("$pki" -d "$d" show old | grep ^status; "$pki" -d "$d" show gone | grep ^status)
[ "$got" = $'status certificate has expired\nstatus certificate revoked' ]
ktap_result $? "show says expired and revoked" || ktap_diag "$got"

# Bad input: an error naming what is wrong, and nothing issued.
errs=
expect_err() {
	local want=$1 out
	shift
	if out=$("$pki" -d "$d" "$@" 2>&1); then
		errs+="accepted: $*; "
	elif [[ $out != *"$want"* ]]; then
		errs+="$*: '$out' lacks '$want'; "
	fi
}
expect_err "unknown role 'root'" node n1 --roles sr,root
expect_err "role 'sr' given twice" node n1 --roles sr,sr
expect_err "--roles is required" node n1
expect_err "node name 'N_1'" node N_1 --roles sr
expect_err "--days '0'" node n1 --roles sr --days 0
expect_err "--san 'a b'" node n1 --roles sr --san 'a b'
expect_err "pe1.crt exists" node pe1 --roles sr
expect_err "already holds a CA" init
expect_err "no CA in" -d "$tmp/none" node n1 --roles sr
expect_err "unknown command 'sign'" sign n1
[ -z "$errs" ] && [ ! -e "$d/n1.crt" ] && [ ! -e "$d/n1.key" ]
ktap_result $? "bad input is refused with an error naming the field, nothing issued" ||
	ktap_diag "$errs"

# The list is valid for a year, and `crl` renews it.
next=$(openssl crl -in "$d/crl.pem" -noout -nextupdate | cut -d= -f2)
days=$(( ($(date -d "$next" +%s) - $(date +%s)) / 86400 ))
n1=$(openssl crl -in "$d/crl.pem" -noout -crlnumber)
"$pki" -d "$d" crl >/dev/null
n2=$(openssl crl -in "$d/crl.pem" -noout -crlnumber)
[ "$days" -ge 364 ] && [ "$n1" != "$n2" ] &&
	openssl crl -in "$d/crl.pem" -noout -text | grep -q 'Serial Number'
ktap_result $? "the revocation list is valid 365 days; crl renews it, revocations kept" ||
	ktap_diag "next update in $days days, crlNumber $n1 -> $n2"

# The AAM's token key pair: Ed25519, private key 600, public key matches.
out=$("$pki" -d "$d" aam-key aam1 2>&1) &&
	openssl pkey -in "$d/aam1.key" -noout -text 2>/dev/null | grep -q 'ED25519 Private-Key' &&
	[ "$(openssl pkey -in "$d/aam1.key" -pubout)" = "$(cat "$d/aam1.pub")" ] &&
	[ "$(stat -c %a "$d/aam1.key")" = 600 ] &&
	! "$pki" -d "$d" aam-key aam1 >/dev/null 2>&1
ktap_result $? "aam-key: an Ed25519 pair for the AAM's tokens, private 600, never overwritten" ||
	ktap_diag "$out"

# The CA key stays private.
perms=$(stat -c %a "$d" "$d/ca.key" "$d/pe1.key" | tr '\n' ' ')
[ "$perms" = "700 600 600 " ]
ktap_result $? "the CA directory and private keys are not readable by others" ||
	ktap_diag "modes: $perms"

ktap_done
