#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a credit loop's time goes, from the kernel's own net tracepoints.

Reads lines "TR SECONDS EVENT DEV LEN" (tools/bench/cbfc_loop.sh prints
them from net_dev_start_xmit and netif_receive_skb) of one run of
PE1 - P - PE2 with the credit on the hop P -> PE2, and splits that hop's
loop: packet k leaves the bottleneck (PE2's es, where its credit is
freed), PE2's RESV carries it back to P (e2 -> p2, netem's delay), and
P sends packet k + C, which reaches PE2 (p2 -> e2). C is the credit in
whole packets. With the link never idle the loop takes C packets' time
at the rate; what it takes beyond that, the link idles.

usage: cbfc_loop.py TRACE CREDIT_PACKETS PACKETS [RESV_LEN]
"""
import bisect
import sys

DATA_MIN = 1000         # data frames are > 1000 bytes, RESVs and pings less


def load(path):
    ev = {}
    for line in open(path):
        f = line.split()
        if f and f[0] == '#':
            f = f[1:]
        if len(f) != 5 or f[0] != 'TR':
            continue
        ev.setdefault((f[2], f[3]), []).append((float(f[1]) * 1000, int(f[4])))
    return ev


def times(ev, event, dev, lo, hi=1 << 20):
    return [t for t, n in ev.get((event, dev), []) if lo <= n <= hi]


def dist(a):
    a = sorted(a)
    if not a:
        return 'none'
    q = ' '.join('p%d %.2f' % (p, a[min(len(a) - 1, len(a) * p // 100)])
                 for p in (10, 50, 90, 99))
    return 'n=%d mean %.2f %s max %.2f ms' % (len(a), sum(a) / len(a), q, a[-1])


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    ev = load(sys.argv[1])
    c = int(sys.argv[2])
    count = int(sys.argv[3])
    out = times(ev, 'net_dev_start_xmit', 'es', DATA_MIN)   # freed at PE2
    sent = times(ev, 'net_dev_start_xmit', 'p2', DATA_MIN)  # P sends
    came = times(ev, 'netif_receive_skb', 'e2', DATA_MIN)   # PE2 takes
    # P's RESVs to PE1 leave by p1, not seen here; what P takes from e2
    # that is not data is RESVs and ping replies: the RESV's length, the
    # most frequent small length but the ping's, unless given.
    small = {}
    for _, n in ev.get(('netif_receive_skb', 'p2'), []):
        if n < DATA_MIN:
            small[n] = small.get(n, 0) + 1
    small.pop(104, None)    # ICMPv6 echo reply of ping's 56 bytes
    if len(sys.argv) > 4:
        rlen = int(sys.argv[4])
    elif small:
        rlen = max(small, key=small.get)
    else:
        sys.exit('cbfc_loop.py: no RESV seen at P')
    resv = times(ev, 'netif_receive_skb', 'p2', rlen, rlen)
    # The k-th packet is paired on three devices: each must have seen
    # every packet once, or the pairs are of different packets.
    seen = (len(out), len(sent), len(came))
    if seen != (count,) * 3:
        sys.exit('cbfc_loop.py: traced %d leaving PE2, %d leaving P, %d '
                 'reaching PE2, not %d each' % (seen + (count,)))
    n = count
    if n <= c:
        sys.exit('cbfc_loop.py: %d packets, not more than the credit (%d)' % (n, c))
    span = out[n - 1] - out[0]
    gaps = [b - a for a, b in zip(out[:n - 1], out[1:n])]
    print('bottleneck: %d packets in %.1f ms, %.3f ms apart on average' %
          (n, span, span / (n - 1)))
    print('  gaps between packets leaving it:', dist(gaps))
    loop, back, fwd = [], [], []
    for k in range(n - c):
        loop.append(came[k + c] - out[k])
        # the last RESV P took before it sent k + C released it
        j = bisect.bisect_right(resv, sent[k + c]) - 1
        if j >= 0 and resv[j] >= out[k]:
            back.append(resv[j] - out[k])
            fwd.append(came[k + c] - resv[j])
    print('loop, packet k leaves PE2 -> packet k+%d reaches PE2:' % c, dist(loop))
    # Where P sent k + C before any RESV after k left PE2, P had waited
    # for its own packets, not for credit: such pairs are not split.
    print('  split where P waited for the credit: %d of %d' % (len(back), n - c))
    print('  k leaves PE2 -> the RESV that released k+%d reaches P:' % c, dist(back))
    print('  that RESV reaches P -> k+%d reaches PE2:' % c, dist(fwd))
    print('  RESVs (%d bytes at p2): %d for %d packets' % (rlen, len(resv), n))


if __name__ == '__main__':
    main()
