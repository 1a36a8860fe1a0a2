#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Generate MPTE benchmark instances (topology + demands, the solver's JSON).

Topologies:
  fig1            the seed draft's Figure 1: 8 XPUs, 4 leaves, 2 spines, 400G
  fattree:K       a K-ary fat-tree of switches (core, aggregation, edge), 400G;
                  demands run between edge switches (ToR-level aggregates)
  aidc:D          D leaf-spine AI data centres (16 leaves, 4 spines, 2 DCI
                  gateways each) joined by 400G DCI links with delay
  wan:N[:DEG]     a random connected WAN of N nodes (Waxman-like, DEG links
                  per node on average, default 3), 100G/400G, metric =
                  distance; a larger DEG (wan:120:8) is a meshed WAN with
                  many long detours for the optimiser to be tempted by

Demand patterns (over the topology's endpoints: XPUs, edge switches, leaves,
or all WAN nodes):
  uniform:M       M random pairs, random volumes
  all2all         every ordered pair
  ring            ring all-reduce: endpoint i sends to i+1
  incast:F        F senders to one receiver

usage: gen.py TOPOLOGY PATTERN [--seed S] [--load L] OUTPREFIX
writes OUTPREFIX.topo.json and OUTPREFIX.demands.json.  --load scales the
volumes so that the total demand is about L times the total capacity
divided by the mean hop count (so max utilisation lands near L..3L).
"""
import argparse
import json
import math
import random


def sid(i):
    return "fc00:%x:%x::" % (i >> 16, i & 0xffff)


class Topo:
    def __init__(self):
        self.nodes = []
        self.index = {}
        self.links = []
        self.endpoints = []

    def node(self, name):
        if name not in self.index:
            self.index[name] = len(self.nodes)
            self.nodes.append({"name": name, "sid": sid(len(self.nodes) + 1)})
        return name

    def link(self, a, b, cap, metric=10, delay=0.0, **kw):
        l = {"from": a, "to": b, "capacity": cap, "te_metric": metric,
             "delay": delay}
        l.update(kw)
        self.links.append(l)

    def doc(self):
        return {"nodes": self.nodes, "links": self.links}


def fig1():
    t = Topo()
    for s in ("S1", "S2"):
        t.node(s)
    for l in range(1, 5):
        t.node("L%d" % l)
        for s in ("S1", "S2"):
            t.link("L%d" % l, s, 400)
    for x in range(1, 9):
        t.node("X%d" % x)
        t.link("X%d" % x, "L%d" % ((x + 1) // 2), 400)
        t.endpoints.append("X%d" % x)
    return t


def fattree(k):
    t = Topo()
    half = k // 2
    cores = [t.node("c%d" % i) for i in range(half * half)]
    for p in range(k):
        aggs = [t.node("p%da%d" % (p, i)) for i in range(half)]
        edges = [t.node("p%de%d" % (p, i)) for i in range(half)]
        for i, a in enumerate(aggs):
            for e in edges:
                t.link(e, a, 400)
            for j in range(half):
                t.link(a, cores[i * half + j], 400)
        t.endpoints += edges
    return t


def aidc(d, rng):
    t = Topo()
    gws = []
    for c in range(d):
        spines = [t.node("dc%ds%d" % (c, i)) for i in range(4)]
        gw = [t.node("dc%dg%d" % (c, i)) for i in range(2)]
        gws.append(gw)
        for l in range(16):
            leaf = t.node("dc%dl%d" % (c, l))
            t.endpoints.append(leaf)
            for s in spines:
                t.link(leaf, s, 400, metric=10, delay=0.001)
        for g in gw:
            for s in spines:
                t.link(g, s, 800, metric=10, delay=0.001)
    # DCI: a ring of data centres plus chords, one link per gateway pair
    for c in range(d):
        for o in ([1] if d == 2 else [1, 2] if d > 3 else [1]):
            e = (c + o) % d
            if e == c or (o == 1 and d == 2 and c == 1):
                continue
            for i in range(2):
                t.link(gws[c][i], gws[e][i], 400, metric=100,
                       delay=2.0 + rng.random() * 3.0, srlg=[1000 + c * d + e])
    return t


def wan(n, rng, deg=3.0):
    t = Topo()
    pos = [(rng.random(), rng.random()) for _ in range(n)]
    names = [t.node("w%d" % i) for i in range(n)]
    t.endpoints = list(names)
    seen = set()

    def add(a, b):
        if a == b or (a, b) in seen or (b, a) in seen:
            return
        seen.add((a, b))
        d = math.dist(pos[a], pos[b])
        t.link(names[a], names[b], rng.choice([100, 400]),
               metric=max(1, int(d * 1000)), delay=d * 50)
    # a random spanning tree over nearby nodes keeps it connected
    order = list(range(n))
    rng.shuffle(order)
    for i in range(1, n):
        a = order[i]
        cand = rng.sample(order[:i], min(i, 8))
        b = min(cand, key=lambda c: math.dist(pos[a], pos[c]))
        add(a, b)
    # then short links more likely than long ones
    target = min(int(deg * n / 2), n * (n - 1) // 2)
    grid = {}
    cell = 1.0 / max(1, int(math.sqrt(n / 4)))
    for i, p in enumerate(pos):
        grid.setdefault((int(p[0] / cell), int(p[1] / cell)), []).append(i)
    while len(seen) < target:
        a = rng.randrange(n)
        gx, gy = int(pos[a][0] / cell), int(pos[a][1] / cell)
        r = 1 + int(deg / 8)    # a denser mesh reaches further out
        near = [j for dx in range(-r, r + 1) for dy in range(-r, r + 1)
                for j in grid.get((gx + dx, gy + dy), [])]
        add(a, rng.choice(near))
    return t


def demands(t, pattern, rng, load):
    ep = t.endpoints
    pairs = []
    kind, _, arg = pattern.partition(":")
    if kind == "uniform":
        m = int(arg)
        for _ in range(m):
            a, b = rng.sample(ep, 2)
            pairs.append((a, b, rng.uniform(0.2, 1.0)))
    elif kind == "all2all":
        pairs = [(a, b, 1.0) for a in ep for b in ep if a != b]
    elif kind == "ring":
        pairs = [(ep[i], ep[(i + 1) % len(ep)], 1.0) for i in range(len(ep))]
    elif kind == "incast":
        f = int(arg)
        dst = ep[-1]
        pairs = [(s, dst, 1.0) for s in rng.sample(ep[:-1], min(f, len(ep) - 1))]
    else:
        raise SystemExit("unknown pattern " + pattern)
    cap = sum(l["capacity"] for l in t.links) * 2
    hops = 3.0
    scale = load * cap / hops / sum(p[2] for p in pairs)
    if kind == "incast":
        # in-cast is limited by the receiver's links, not the network
        rx = sum(l["capacity"] for l in t.links if dst in (l["from"], l["to"]))
        scale = load * rx / sum(p[2] for p in pairs)
    out = []
    for i, (a, b, w) in enumerate(pairs):
        out.append({"id": "d%d" % i, "ingress": a, "egress": b,
                    "bandwidth": round(w * scale, 3)})
    return {"demands": out}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("topology")
    ap.add_argument("pattern")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--load", type=float, default=0.5)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    kind, _, arg = a.topology.partition(":")
    if kind == "fig1":
        t = fig1()
    elif kind == "fattree":
        t = fattree(int(arg))
    elif kind == "aidc":
        t = aidc(int(arg), rng)
    elif kind == "wan":
        n, _, deg = arg.partition(":")
        t = wan(int(n), rng, float(deg) if deg else 3.0)
    else:
        raise SystemExit("unknown topology " + a.topology)
    d = demands(t, a.pattern, rng, a.load)
    with open(a.out + ".topo.json", "w") as f:
        json.dump(t.doc(), f)
    with open(a.out + ".demands.json", "w") as f:
        json.dump(d, f)


if __name__ == "__main__":
    main()
