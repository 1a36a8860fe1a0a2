#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare what the kernel's YNL cli.py read with what `dmsc -j` read.

    ynl_compare.py tunnels|rules|sessions|info CLI_JSON DMSC_JSON

CLI_JSON is cli.py --output-json output (a dump's list of messages or one
message), DMSC_JSON the matching `dmsc -j -s ... show` (or `info`). The
cli.py side is put into dmsc's spelling (segment lists from hex to
address lists, enums to dmsc's words, dashes to underscores) and then
every field of either side must be in the other with the same value.
Prints each difference, or the number of fields found equal; exit 1 on a
difference.
"""
import ipaddress
import json
import sys

problems = []
FLOW_PATH_BACKUP = 0xffffffff


def sids(hexstr):
    raw = bytes.fromhex(hexstr)
    return [str(ipaddress.IPv6Address(raw[i:i + 16])) for i in range(0, len(raw), 16)]


def prefix(family, hexstr, plen):
    addr = ipaddress.ip_address(bytes.fromhex(hexstr))
    want = 4 if family == 2 else 6
    if addr.version != want:
        problems.append(f"family {family} with a {addr.version} address {addr}")
    return f"{addr}/{plen}"


def path(p, backup):
    out = {"segs": sids(p["segs"])}
    if backup:
        # dmsc prints neither for the backup; the kernel sends the index
        # that marks it and the weight it ignores.
        if p.get("index") != FLOW_PATH_BACKUP:
            problems.append(f"backup index {p.get('index')}, not {FLOW_PATH_BACKUP}")
    else:
        out["index"] = p["index"]
        out["weight"] = p["weight"]
    for k in ("flows", "packets", "bytes"):
        if k in p:
            out[k] = p[k]
    return out


def tunnel(t):
    out = {k: t[k] for k in ("id", "src", "active", "flows", "packets",
                             "bytes", "switches") if k in t}
    out["mode"] = {"encap": "encap", "encap-red": "encap.red"}[t["mode"]]
    out["state"] = "up" if t["admin-up"] else "down"
    out["paths"] = [path(p, False) for p in t.get("path", [])]
    if "backup" in t:
        out["backup"] = path(t["backup"], True)
    return out


def rule(r):
    out = {"family": {2: "inet", 10: "inet6"}[r["family"]],
           "dst": prefix(r["family"], r["dst"], r["dst-len"])}
    if "src" in r:
        out["src"] = prefix(r["family"], r["src"], r["src-len"])
    for k in ("qpn-lo", "qpn-hi", "tunnel", "packets"):
        out[k.replace("-", "_")] = r[k]
    return out


def hop(hexstr):
    """A next hop as dmsc prints it: an IPv4-mapped one as IPv4."""
    addr = ipaddress.IPv6Address(bytes.fromhex(hexstr))
    return str(addr.ipv4_mapped or addr)


def session(s):
    fam = {2: 4, 10: 6}[s["family"]]
    out = {}
    for k in ("src", "dst"):
        addr = ipaddress.ip_address(bytes.fromhex(s[k]))
        if addr.version != fam:
            problems.append(f"family {s['family']} with a {addr.version} address {addr}")
        out[k] = str(addr)
    for k in ("nexthop", "backup-nexthop"):
        if k in s:
            out[k.replace("-", "_")] = hop(s[k])
    if "prevhop" in s:
        out["prevhop"] = str(ipaddress.IPv6Address(bytes.fromhex(s["prevhop"])))
    # dmsc prints returned and returns of a session that returns credit.
    counters = ["sport", "qpn", "mode", "credit", "freed", "sent", "available",
                "packets", "updates", "stale", "absurd", "tunnel", "failed",
                "backup-credit", "backup-mode", "on-backup"]
    if "prevhop" in s:
        counters += ["returned", "returns"]
    for k in counters:
        if k in s:
            out[k.replace("-", "_")] = s[k]
    return out


def info(m):
    out = {"version": m["version"], "netns_cookie": m["netns-cookie"],
           "features": sorted(m["features"]), "flow_limit": m["flow-limit"],
           "flow_timeout_ms": m["flow-timeout"],
           "stats": {k.replace("-", "_"): v for k, v in m["stats"].items()}}
    return out


def compare(where, a, b):
    """Every leaf of a and b, by path; returns how many were equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        n = 0
        for k in sorted(set(a) | set(b)):
            if k not in b:
                problems.append(f"{where}.{k}: cli.py {a[k]!r}, dmsc has none")
            elif k not in a:
                problems.append(f"{where}.{k}: dmsc {b[k]!r}, cli.py has none")
            else:
                n += compare(f"{where}.{k}", a[k], b[k])
        return n
    if isinstance(a, list) and isinstance(b, list) and \
            (a and isinstance(a[0], (dict, list)) or b and isinstance(b[0], (dict, list))):
        if len(a) != len(b):
            problems.append(f"{where}: cli.py has {len(a)}, dmsc {len(b)}")
        return sum(compare(f"{where}[{i}]", x, y) for i, (x, y) in enumerate(zip(a, b)))
    if a != b:
        problems.append(f"{where}: cli.py {a!r}, dmsc {b!r}")
        return 0
    return 1


def main():
    kind, cli_file, dmsc_file = sys.argv[1:4]
    cli = json.load(open(cli_file))
    dmsc = json.load(open(dmsc_file))
    if kind == "info":
        # A set in the kernel's flags; dmsc lists them in bit order.
        dmsc["features"] = sorted(dmsc["features"])
        n = compare("info", info(cli), dmsc)
    else:
        key, conv = {"tunnels": ("tunnel", tunnel), "rules": ("rule", rule),
                     "sessions": ("session", session)}[kind]
        msgs = cli if isinstance(cli, list) else [cli]
        n = compare(kind, [conv(m[key]) for m in msgs], dmsc)
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(f"{n} fields equal")


main()
