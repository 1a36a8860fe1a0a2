#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send one credit-return RESV (type 29, cumulative Credit) over IPv6, as
the kernel does (Documentation/cbfc.md, "Credit returns"), or a broken
one, for selftests/cbfc_credit.sh. The flow is cbfc_credit.sh's:
10.9.0.1:50000 > 10.9.9.2, the QP given.

  rsvp_forge.py src ADDR6 dst ADDR6 freed N qpn Q [cut K [fixlen]]
                [badsum] [objlen] [delta]

cut K: drop the last K bytes (fixlen: and set the header's length to
what is left, with a checksum over it); badsum: a wrong checksum;
objlen: the Credit object's length 4 bytes short; delta: the delta
form (C-Type 3) with N as the bytes freed. Sent with hop limit
255, as a speaker sends (RSVP_HOP_LIMIT).
"""
import socket
import struct
import sys


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def obj(cls, ctype, body):
    return struct.pack("!HBB", 4 + len(body), cls, ctype) + body


def main(argv):
    a = {}
    flags = set()
    i = 0
    while i < len(argv):
        if argv[i] in ("fixlen", "badsum", "objlen", "delta"):
            flags.add(argv[i])
            i += 1
        else:
            a[argv[i]] = argv[i + 1]
            i += 2
    src = socket.inet_pton(socket.AF_INET6, a["src"])
    ent = struct.pack("!I", 32473)
    if "delta" in flags:
        credit = obj(124, 3, ent + struct.pack("!Q", int(a["freed"])))
    else:
        credit = obj(124, 2, ent + struct.pack("!QQ", 8800, int(a["freed"])))
    if "objlen" in flags:
        credit = struct.pack("!H", len(credit) - 4) + credit[2:]
    body = (obj(1, 1, socket.inet_aton("10.9.9.2") + bytes([17, 0]) +
                struct.pack("!H", 4791)) +
            obj(3, 2, src + bytes(4)) +
            obj(5, 1, struct.pack("!I", 30000)) +
            obj(125, 1, ent + struct.pack("!I", int(a["qpn"]))) +
            credit +
            obj(10, 1, socket.inet_aton("10.9.0.1") + bytes(2) +
                struct.pack("!H", 50000)))
    length = 8 + len(body)
    cut = int(a.get("cut", 0))
    if cut and "fixlen" in flags:
        length -= cut
    msg = bytearray(struct.pack("!BBHBBH", 0x10, 29, 0, 64, 0, length) + body)
    if cut:
        del msg[len(msg) - cut:]
    s = csum(bytes(msg))
    if "badsum" in flags:
        s ^= 0x5555
    msg[2:4] = struct.pack("!H", s)
    sk = socket.socket(socket.AF_INET6, socket.SOCK_RAW, 46)
    sk.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS,
                  255)
    sk.bind((a["src"], 0))
    sk.sendto(bytes(msg), (a["dst"], 0))


if __name__ == "__main__":
    main(sys.argv[1:])
