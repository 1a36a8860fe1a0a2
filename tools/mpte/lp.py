#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write the MPTE routing problem as an LP (CPLEX LP format) for glpsol.

The exact reference the solver is held to, written independently of the C
code from the same JSON documents:

  min U
  sum_g x[g,a] - U c_a <= -reserved_a                 every arc a
  out_g(v) - in_g(v) = supply_g(v)                    every group g, node v

A group is the demands sharing an ingress set and colour constraints: they
may use the same arcs, so one commodity per group carries them all (source
aggregation keeps the LP at groups x arcs columns).  Several ingresses or
egresses get super-source / super-sink variables.  Every demand is routed
at its full bandwidth (no admission control: compare with the solver's
--no-admission); max_delay and max_paths are path properties an arc LP
cannot express and are relaxed (the LP value is then a lower bound).

usage: lp.py TOPO.json DEMANDS.json OUT.lp   (prints the column count)
"""
import json
import sys


def colour_mask(v, names):
    if v is None:
        return 0
    if isinstance(v, int):
        return v
    m = 0
    for c in v:
        m |= 1 << (c if isinstance(c, int) else names[c])
    return m


def arcs_of(topo):
    names = topo.get("colours", {})
    arcs = []
    for l in topo["links"]:
        res = l.get("reserved", 0)
        res = sum(res) if isinstance(res, list) else res
        col = colour_mask(l.get("colours"), names)
        a = (l["from"], l["to"], float(l["capacity"]), float(res), col)
        arcs.append(a)
        if l.get("bidirectional", True):
            arcs.append((l["to"], l["from"], a[2], a[3], col))
    return arcs, names


def as_list(v):
    return [v] if isinstance(v, str) else list(v)


def allowed(col, inc_any, inc_all, exc_any):
    if exc_any and col & exc_any:
        return False
    if inc_any and not col & inc_any:
        return False
    return col & inc_all == inc_all


def wrap(terms):
    # keep lines short: LP readers need not accept very long ones
    return "\n   ".join(" ".join(terms[i:i + 8]) for i in range(0, len(terms), 8))


def write(topo, dem, out):
    arcs, names = arcs_of(topo)
    nodes = [n["name"] for n in topo["nodes"]]
    groups = {}
    for d in dem["demands"]:
        key = (tuple(sorted(as_list(d["ingress"]))),
               colour_mask(d.get("include_any"), names),
               colour_mask(d.get("include_all"), names),
               colour_mask(d.get("exclude_any"), names))
        bw = d.get("bandwidth")
        if bw is None:
            bw = d["elastic"]["max"]
        groups.setdefault(key, []).append((as_list(d["egress"]), float(bw)))

    cap_terms = [[] for _ in arcs]
    rows = []
    ncols = 1
    for gi, (key, members) in enumerate(groups.items()):
        ing, ia, il, ex = key
        total = sum(b for _, b in members)
        flow = {v: [] for v in nodes}          # terms of out - in at v
        supply = {v: 0.0 for v in nodes}
        for ai, (u, v, c, r, col) in enumerate(arcs):
            if not allowed(col, ia, il, ex):
                continue
            x = "x%d_%d" % (gi, ai)
            ncols += 1
            flow[u].append("+ " + x)
            flow[v].append("- " + x)
            cap_terms[ai].append("+ " + x)
        if len(ing) == 1:
            supply[ing[0]] += total
        else:
            terms = []
            for j, v in enumerate(ing):
                s = "s%d_%d" % (gi, j)
                ncols += 1
                flow[v].append("- " + s)
                terms.append("+ " + s)
            rows.append("src%d: %s = %.12g" % (gi, wrap(terms), total))
        for k, (eg, b) in enumerate(members):
            if len(eg) == 1:
                supply[eg[0]] -= b
                continue
            terms = []
            for j, v in enumerate(eg):
                o = "o%d_%d_%d" % (gi, k, j)
                ncols += 1
                flow[v].append("+ " + o)
                terms.append("+ " + o)
            rows.append("snk%d_%d: %s = %.12g" % (gi, k, wrap(terms), b))
        for ni, v in enumerate(nodes):
            if flow[v] or supply[v]:
                lhs = wrap(flow[v]) if flow[v] else "0 U"
                rows.append("n%d_%d: %s = %.12g" % (gi, ni, lhs, supply[v]))
    with open(out, "w") as f:
        f.write("Minimize\n obj: U\nSubject To\n")
        for ai, (u, v, c, r, col) in enumerate(arcs):
            if cap_terms[ai]:
                f.write(" c%d: %s - %.12g U <= %.12g\n"
                        % (ai, wrap(cap_terms[ai]), c, -r))
        for r in rows:
            f.write(" " + r + "\n")
        f.write("End\n")
    return ncols


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        topo = json.load(f)
    with open(sys.argv[2]) as f:
        dem = json.load(f)
    print(write(topo, dem, sys.argv[3]))


if __name__ == "__main__":
    main()
