#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Generate planner inputs: a transformer-like chain (embedding, blocks,
output head; optional business heads) and heterogeneous sites whose WAN
bandwidth is a fraction of the intra-site bandwidth.

  gen.py model --layers 24 [--hidden 4096] [--seq 2048] [--mbs 1] [--heads 0]
  gen.py sites --sites 3 [--wan-fraction 0.1] [--intra-gbps 400] [--seed 1]
"""
import argparse
import json
import random
import sys


def model(a):
    h, s, b = a.hidden, a.seq, a.mbs
    tokens = s * b
    act = 2 * tokens * h                       # fp16 output of a block
    rnd = random.Random(a.seed)

    def layer(name, params, flop_per_token):
        fwd = flop_per_token * tokens / 1e9
        return {"name": name, "forward_gflop": round(fwd, 3),
                "backward_gflop": round(2 * fwd, 3),
                "param_bytes": 2 * params,
                "activation_bytes": act,
                # fp16 weights and gradients, fp32 Adam state and master
                "memory_bytes": 16 * params}
    vocab = 50304
    layers = [layer("embed", vocab * h, 2 * h)]
    for i in range(a.layers - 2):
        # blocks differ a little (e.g. MoE or wider MLPs every few)
        width = 1.0 + (0.5 if a.vary and rnd.random() < 0.2 else 0.0)
        p = int(12 * h * h * width)
        layers.append(layer("block%d" % i, p, 2 * p + 4 * s * h))
    layers.append(layer("lm_head", vocab * h, 2 * vocab * h))
    m = {"name": "transformer-%d" % a.layers, "layers": layers}
    if a.heads:
        m["heads"] = [{"name": "task%d" % k,
                       "layers": [layer("task%d_l%d" % (k, j), 4 * h * h,
                                        8 * h * h) for j in range(2)]}
                      for k in range(a.heads)]
    return m


def sites(a):
    rnd = random.Random(a.seed)
    kinds = [(64, 312.0, 80e9), (32, 197.0, 40e9), (48, 125.0, 32e9),
             (16, 312.0, 80e9)]
    out = []
    for i in range(a.sites):
        g, tf, mem = kinds[i % len(kinds)]
        out.append({"name": "aidc-%c" % (ord('a') + i), "gpus": g,
                    "tflops": tf, "gpu_memory_bytes": mem,
                    "intra_gbps": a.intra_gbps})
    n = a.sites
    bw = [[0.0] * n for _ in range(n)]
    lat = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            f = a.wan_fraction * rnd.uniform(0.7, 1.0)
            bw[i][j] = bw[j][i] = round(a.intra_gbps * f, 3)
            lat[i][j] = lat[j][i] = round(rnd.uniform(2, 10), 2)
    return {"sites": out, "wan_gbps": bw, "wan_latency_ms": lat}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["model", "sites"])
    p.add_argument("--layers", type=int, default=24)
    p.add_argument("--hidden", type=int, default=4096)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--mbs", type=int, default=1)
    p.add_argument("--heads", type=int, default=0)
    p.add_argument("--vary", action="store_true")
    p.add_argument("--sites", type=int, default=3)
    p.add_argument("--wan-fraction", type=float, default=0.1)
    p.add_argument("--intra-gbps", type=float, default=400)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    json.dump(model(a) if a.what == "model" else sites(a), sys.stdout,
              indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
