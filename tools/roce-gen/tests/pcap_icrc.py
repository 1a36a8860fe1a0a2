#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check RoCEv2 ICRCs in a pcap, independently of roce-gen's C code.

Reads a classic pcap (Ethernet link type, as tcpdump -w writes), takes every
UDP packet to port 4791 and recomputes its ICRC from the bytes on the wire
per IBA annex A17 (8 bytes of 1s for the LRH, IP header with TOS/TTL/checksum
or traffic class/flow label/hop limit masked, UDP checksum masked, BTH
resv8a masked, the rest as is) with zlib's CRC-32. Prints "good N bad M".
"""
import struct
import sys
import zlib


def packets(path):
    with open(path, 'rb') as f:
        hdr = f.read(24)
        magic = struct.unpack('<I', hdr[:4])[0]
        endian = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
        linktype = struct.unpack(endian + 'I', hdr[20:24])[0]
        if linktype != 1:
            sys.exit('pcap link type %d, want Ethernet (1)' % linktype)
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            incl = struct.unpack(endian + 'IIII', rec)[2]
            yield f.read(incl)


def icrc_ok(frame):
    etype = struct.unpack('!H', frame[12:14])[0]
    ip = frame[14:]
    if etype == 0x0800:
        ihl = (ip[0] & 0xf) * 4
        if ip[9] != 17:
            return None
        hdr = bytearray(ip[:ihl])
        hdr[1] = 0xff
        hdr[8] = 0xff
        hdr[10:12] = b'\xff\xff'
        total = struct.unpack('!H', ip[2:4])[0]
    elif etype == 0x86dd:
        ihl = 40
        if ip[6] != 17:
            return None
        hdr = bytearray(ip[:40])
        hdr[0] |= 0x0f
        hdr[1:4] = b'\xff\xff\xff'
        hdr[7] = 0xff
        total = 40 + struct.unpack('!H', ip[4:6])[0]
    else:
        return None
    udp = bytearray(ip[ihl:ihl + 8])
    if struct.unpack('!H', udp[2:4])[0] != 4791:
        return None
    udp[6:8] = b'\xff\xff'
    body = bytearray(ip[ihl + 8:total])
    body[4] = 0xff
    crc = zlib.crc32(b'\xff' * 8 + bytes(hdr) + bytes(udp) + bytes(body[:-4]))
    return struct.pack('<I', crc) == bytes(ip[total - 4:total])


def main():
    good = bad = 0
    for frame in packets(sys.argv[1]):
        r = icrc_ok(frame)
        if r is True:
            good += 1
        elif r is False:
            bad += 1
    print('good %d bad %d' % (good, bad))


if __name__ == '__main__':
    main()
