#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""How far the path cap is from the LP, on a small instance, by MIP.

Offline analysis, not a test: it takes minutes where the solver takes
milliseconds.  For one topology and demand file (mpte-solve's formats;
one ingress and one egress a demand, no colours or delay bounds):

  LP         the path LP's optimum, by column generation (HiGHS's simplex)
  lower      a bound no routing with the cap can beat: every demand the LP
             spreads over more than max_paths paths gets max_paths path
             slots (binary arcs holding one s-t path, the slot's flow on
             them; they may hold cycles besides, over which a slot's flow
             can split), every other demand is an uncapped flow (a
             relaxation)
  upper      a routing with the cap: the MIP over a pool of paths (the LP's
             columns, k shortest by TE metric and by hops, and the paths of
             the lower bound's routing), at most max_paths a demand

    python3 tools/mpte/capped_mip.py TOPO DEMANDS [--k 30] [--time 600]

Needs Debian's python3-scipy (1.10: milp, HiGHS) and python3-networkx.
Seed 646 of test_random's capped soak (MPTE_DUMP=646 writes it): LP
0.118154, lower 1.0000 x, upper 1.0031 x; mpte-solve 1.0173 x.
"""
import argparse
import heapq
import itertools
import json
import sys
import time

import networkx as nx
import numpy as np
from scipy.optimize import Bounds, LinearConstraint, linprog, milp
from scipy.sparse import coo_matrix


class Instance:
    def __init__(self, topo, demands):
        self.arcs = []  # (from, to, capacity)
        for link in topo["links"]:
            m = link.get("te_metric", 1)
            self.arcs.append((link["from"], link["to"], link["capacity"], m))
            if link.get("bidirectional", True):
                self.arcs.append((link["to"], link["from"], link["capacity"], m))
        self.cap = np.array([a[2] for a in self.arcs], dtype=float)
        # a second arc between the same nodes goes through a midpoint of its
        # own (networkx's path searches want a simple digraph)
        self.g = nx.DiGraph()
        self.arc_of = {}
        for i, (u, v, _, m) in enumerate(self.arcs):
            if not self.g.has_edge(u, v):
                self.arc_of[(u, v)] = i
                self.g.add_edge(u, v, arc=i, m=m)
            else:
                mid = f"{u}~{v}#{i}"
                self.arc_of[(u, mid)] = i
                self.arc_of[(mid, v)] = -1
                self.g.add_edge(u, mid, arc=i, m=m)
                self.g.add_edge(mid, v, arc=-1, m=0)
        self.dem = []
        for d in demands:
            if len(d["ingress"]) != 1 or len(d["egress"]) != 1:
                sys.exit(f"{d['id']}: one ingress and one egress only")
            self.dem.append((d["ingress"][0], d["egress"][0], d["bandwidth"],
                             d.get("max_paths", 8)))
        self.cols = [[] for _ in self.dem]

    def add(self, d, nodes):
        """Add a node path as demand d's column; True if it is new."""
        p = tuple(a for a in (self.arc_of[(nodes[i], nodes[i + 1])]
                              for i in range(len(nodes) - 1)) if a >= 0)
        if p in self.cols[d]:
            return False
        self.cols[d].append(p)
        return True

    def index(self):
        return [(d, k) for d in range(len(self.dem))
                for k in range(len(self.cols[d]))]


class Rows:
    """A sparse constraint matrix built row by row."""

    def __init__(self):
        self.i, self.j, self.v, self.lo, self.hi = [], [], [], [], []

    def add(self, entries, lo, hi):
        r = len(self.lo)
        for j, v in entries:
            self.i.append(r)
            self.j.append(j)
            self.v.append(v)
        self.lo.append(lo)
        self.hi.append(hi)

    def constraint(self, n):
        m = coo_matrix((self.v, (self.i, self.j)), shape=(len(self.lo), n))
        return LinearConstraint(m.tocsr(), np.array(self.lo), np.array(self.hi))


def path_lp(ins):
    """min U over the columns: (result, column index)."""
    idx = ins.index()
    n = len(idx) + 1
    ub = Rows()
    for a in range(len(ins.arcs)):
        ub.add([(j, 1) for j, (d, k) in enumerate(idx) if a in ins.cols[d][k]]
               + [(n - 1, -ins.cap[a])], -np.inf, 0)
    c = np.zeros(n)
    c[-1] = 1
    a_ub = coo_matrix((ub.v, (ub.i, ub.j)), shape=(len(ub.lo), n)).tocsr()
    a_eq = coo_matrix(([1] * len(idx), ([d for d, _ in idx], range(len(idx)))),
                      shape=(len(ins.dem), n)).tocsr()
    r = linprog(c, A_ub=a_ub, b_ub=np.zeros(len(ub.lo)), A_eq=a_eq,
                b_eq=np.array([d[2] for d in ins.dem]), bounds=(0, None),
                method="highs")
    if r.status != 0:
        sys.exit(f"path LP: {r.message}")
    return r, idx


def column_generation(ins):
    for d, (s, t, _, _) in enumerate(ins.dem):
        ins.add(d, nx.shortest_path(ins.g, s, t, weight="m"))
    while True:
        r, idx = path_lp(ins)
        length = np.maximum(-r.ineqlin.marginals, 0)
        for _, _, e in ins.g.edges(data=True):
            e["w"] = (length[e["arc"]] if e["arc"] >= 0 else 0) + 1e-12
        new = 0
        for d, (s, t, _, _) in enumerate(ins.dem):
            p = nx.shortest_path(ins.g, s, t, weight="w")
            cost = sum(ins.g[p[i]][p[i + 1]]["w"] for i in range(len(p) - 1))
            if cost < r.eqlin.marginals[d] - 1e-9 and ins.add(d, p):
                new += 1
        if not new:
            return r, idx


def lower_bound(ins, over, limit):
    """The slot relaxation: (dual bound, flows per demand as {edge: x})."""
    edges = [(u, v, e["arc"]) for u, v, e in ins.g.edges(data=True)]
    ne, nodes, nvar = len(edges), list(ins.g.nodes()), [0]

    def block(n):
        nvar[0] += n
        return nvar[0] - n
    free = {d: block(ne) for d in range(len(ins.dem)) if d not in over}
    slots = {(d, k): (block(ne), block(ne), block(1))   # arcs, flow, value
             for d in over for k in range(ins.dem[d][3])}
    u = block(1)
    rows = Rows()

    def conserve(base, s, t, value=None, var=None):
        for v in nodes:
            ent = [(base + j, 1) for j, (a, _, _) in enumerate(edges) if a == v]
            ent += [(base + j, -1) for j, (_, b, _) in enumerate(edges) if b == v]
            if var is not None:
                ent += [(var, -1)] if v == s else [(var, 1)] if v == t else []
                rows.add(ent, 0, 0)
            else:
                rhs = value if v == s else -value if v == t else 0
                rows.add(ent, rhs, rhs)
    for d, base in free.items():
        conserve(base, ins.dem[d][0], ins.dem[d][1], value=ins.dem[d][2])
    for d in over:
        s, t, bw, cap = ins.dem[d]
        for k in range(cap):
            z, g, f = slots[d, k]
            conserve(z, s, t, value=1)
            conserve(g, s, t, var=f)
            for j in range(ne):
                rows.add([(g + j, 1), (z + j, -bw)], -np.inf, 0)
            if k:   # slots in order of flow: fewer symmetric branches
                rows.add([(slots[d, k - 1][2], 1), (f, -1)], 0, np.inf)
        rows.add([(slots[d, k][2], 1) for k in range(cap)], bw, bw)
    flows = list(free.values()) + [g for _, g, _ in slots.values()]
    for a in range(len(ins.arcs)):
        rows.add([(b + j, 1) for j, (_, _, i) in enumerate(edges) if i == a
                  for b in flows] + [(u, -ins.cap[a])], -np.inf, 0)
    c = np.zeros(nvar[0])
    c[u] = 1
    integ, hi = np.zeros(nvar[0]), np.full(nvar[0], np.inf)
    for z, _, _ in slots.values():
        integ[z:z + ne] = 1
        hi[z:z + ne] = 1
    r = milp(c, constraints=[rows.constraint(nvar[0])], integrality=integ,
             bounds=Bounds(np.zeros(nvar[0]), hi),
             options={"time_limit": limit, "mip_rel_gap": 1e-6})
    if r.x is None:
        sys.exit(f"lower bound MIP: {r.message}")
    per = {}
    for d in range(len(ins.dem)):
        bases = [free[d]] if d in free else \
                [slots[d, k][1] for k in range(ins.dem[d][3])]
        per[d] = [{j: r.x[b + j] for j in range(ne)} for b in bases]
    return r.mip_dual_bound, per, edges


def decompose(flow, edges, s, t):
    """Paths of an s-t flow, widest first, as node lists."""
    f = {j: x for j, x in flow.items() if x > 1e-9}
    paths = []
    while True:
        out = {}
        for j, x in f.items():
            if x > 1e-9:
                out.setdefault(edges[j][0], []).append(j)
        best, heap, done = {s: (np.inf, None)}, [(-np.inf, s)], set()
        while heap:
            w, v = heapq.heappop(heap)
            if v in done:
                continue
            done.add(v)
            for j in out.get(v, []):
                nw, to = min(-w, f[j]), edges[j][1]
                if to not in best or nw > best[to][0]:
                    best[to] = (nw, j)
                    heapq.heappush(heap, (-nw, to))
        if t not in best:
            return paths
        js, v = [], t
        while v != s:
            j = best[v][1]
            js.append(j)
            v = edges[j][0]
        for j in js:
            f[j] -= best[t][0]
        paths.append([edges[j][0] for j in reversed(js)] + [t])


def capped_mip(ins, limit):
    """min U with at most max_paths columns in use a demand."""
    idx = ins.index()
    m = len(idx)
    n = 2 * m + 1
    rows = Rows()
    for a in range(len(ins.arcs)):
        rows.add([(j, 1) for j, (d, k) in enumerate(idx) if a in ins.cols[d][k]]
                 + [(n - 1, -ins.cap[a])], -np.inf, 0)
    for j, (d, _) in enumerate(idx):
        rows.add([(j, 1), (m + j, -ins.dem[d][2])], -np.inf, 0)
    for d, (_, _, bw, cap) in enumerate(ins.dem):
        rows.add([(j, 1) for j, (e, _) in enumerate(idx) if e == d], bw, bw)
        rows.add([(m + j, 1) for j, (e, _) in enumerate(idx) if e == d],
                 0, cap)
    c = np.zeros(n)
    c[-1] = 1
    integ, hi = np.zeros(n), np.full(n, np.inf)
    integ[m:2 * m] = 1
    hi[m:2 * m] = 1
    r = milp(c, constraints=[rows.constraint(n)], integrality=integ,
             bounds=Bounds(np.zeros(n), hi),
             options={"time_limit": limit, "mip_rel_gap": 1e-6})
    if r.x is None:
        sys.exit(f"capped MIP: {r.message}")
    return r.fun


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("topology")
    ap.add_argument("demands")
    ap.add_argument("--k", type=int, default=30,
                    help="shortest paths a demand added to the pool, by TE metric and by hops")
    ap.add_argument("--time", type=float, default=600,
                    help="seconds for each MIP")
    a = ap.parse_args()
    ins = Instance(json.load(open(a.topology)),
                   json.load(open(a.demands))["demands"])
    t0 = time.time()
    r, idx = column_generation(ins)
    lp = r.fun
    used = [sum(1 for j, (e, _) in enumerate(idx) if e == d and r.x[j] > 1e-9)
            for d in range(len(ins.dem))]
    over = [d for d, n in enumerate(used) if n > ins.dem[d][3]]
    print(f"LP {lp:.6f} ({sum(map(len, ins.cols))} columns); "
          f"demands over their cap in it: {over or 'none'}")
    for d, (s, t, _, _) in enumerate(ins.dem):
        for w in ("m", None):
            for p in itertools.islice(nx.shortest_simple_paths(ins.g, s, t, weight=w), a.k):
                ins.add(d, p)
    lower = lp
    if over:
        lower, per, edges = lower_bound(ins, over, a.time)
        for d, flows in per.items():
            for f in flows:
                for p in decompose(f, edges, ins.dem[d][0], ins.dem[d][1]):
                    ins.add(d, p)
    upper = capped_mip(ins, a.time)
    print(f"lower {lower / lp:.6f} x LP, upper {upper / lp:.6f} x LP "
          f"(U {upper:.6f}, {sum(map(len, ins.cols))} paths in the pool), "
          f"{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
