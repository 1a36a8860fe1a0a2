#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Convert an SNDlib instance (the JSON form in ../shared/data/sndlib) to the
MPTE solver's topology and demand documents.

SNDlib links are undirected: each becomes one bidirectional link whose
capacity is pre_installed_capacity, or the first module's capacity where
that is 0 (as ../shared/data/README.md says).  Demands keep SNDlib's ids and
values (one unit per instance, meta.unit where given).  Each node gets a
SID (fc00:0:N::, N from 1 in file order), as gen.py's instances have.  Parallel demands
between the same pair are kept as separate demands.

usage: sndlib2mpte.py INSTANCE.json OUTDIR   (writes NAME.topo.json, NAME.demands.json)
"""
import json
import os
import sys


def convert(path):
    with open(path) as f:
        src = json.load(f)
    # SNDlib has no SIDs: one per node, numbered as gen.py numbers its
    # own, so that results are installable (dmsc mpte batch needs them)
    nodes = [{"name": n["id"], "sid": "fc00:%x:%x::" % (i >> 16, i & 0xffff)}
             for i, n in enumerate(src["nodes"], 1)]
    links = []
    for l in src["links"]:
        cap = float(l.get("pre_installed_capacity") or 0)
        if cap <= 0:
            mods = l.get("modules") or []
            cap = float(mods[0]["module_capacity"]) if mods else 0
        if cap <= 0:
            raise SystemExit("%s: link %s has no capacity" % (path, l["id"]))
        links.append({"id": l["id"], "from": l["source"], "to": l["target"],
                      "capacity": cap, "te_metric": 1})
    demands = []
    for d in src["demands"]:
        if d["source"] == d["target"] or float(d["demand_value"]) <= 0:
            continue
        demands.append({"id": d["id"], "ingress": d["source"],
                        "egress": d["target"],
                        "bandwidth": float(d["demand_value"])})
    return {"nodes": nodes, "links": links}, {"demands": demands}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    topo, dem = convert(sys.argv[1])
    name = os.path.splitext(os.path.basename(sys.argv[1]))[0]
    os.makedirs(sys.argv[2], exist_ok=True)
    for suffix, doc in (("topo", topo), ("demands", dem)):
        with open(os.path.join(sys.argv[2], "%s.%s.json" % (name, suffix)), "w") as f:
            json.dump(doc, f)


if __name__ == "__main__":
    main()
