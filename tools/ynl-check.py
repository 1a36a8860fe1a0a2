#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hold Documentation/netlink/specs/dmsc.yaml against the kernel's YNL
schema and against uapi/linux/dmsc.h.

First the spec must validate against the jsonschema of its protocol from
the kernel's own tree (Documentation/netlink/PROTOCOL.yaml of
linux-source-6.12, unpacked by tools/install-deps.sh; DMSC_YNL_SRC names
another tree): what the kernel's cli.py and ynl-gen-c.py check before they
read a spec. Then every attribute set, operation and enum of the spec must
name, in the same order and with the same values, what the header's enums
say. Prints KTAP, one case per check.
"""
import os
import re
import sys
from pathlib import Path

import jsonschema
import yaml

top = Path(__file__).resolve().parent.parent
spec = yaml.safe_load((top / "Documentation/netlink/specs/dmsc.yaml").read_text())
header = (top / "uapi/linux/dmsc.h").read_text()


def c_enum(prefix):
    """Constant names and values of the header enum whose entries start with prefix."""
    for body in re.findall(r"enum\s+\w+\s*\{(.*?)\};", header, re.S):
        names = re.findall(r"^\s*(\w+)\s*(?:=\s*([^,/]+))?,", body, re.M)
        if names and names[0][0].startswith(prefix):
            out, val = {}, -1
            for name, expr in names:
                if name.startswith("__"):
                    continue
                val = eval(expr.replace("<<", "<<")) if expr else val + 1
                out[name] = val
            return out
    return None


def c_name(prefix, name):
    return (prefix + name).upper().replace("-", "_")


cases = []

ksrc = Path(os.environ.get("DMSC_YNL_SRC", "/usr/src/linux-source-6.12"))
schema_file = ksrc / "Documentation/netlink" / f"{spec.get('protocol')}.yaml"
if schema_file.is_file():
    schema = yaml.safe_load(schema_file.read_text())
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(spec),
                    key=lambda e: list(e.path))
    cases.append((f"spec validates against the kernel's {schema_file.name}",
                  [f"{'/'.join(map(str, e.path)) or '(top)'}: {e.message}"
                   for e in errors]))
else:
    cases.append(("spec validates against the kernel's schema",
                  [f"no {schema_file} (run tools/install-deps.sh)"]))


def case(desc, problems):
    cases.append((desc, problems))


for aset in spec["attribute-sets"]:
    prefix = c_name(aset["name-prefix"], "")
    want = c_enum(prefix)
    problems = []
    if want is None:
        problems.append(f"no enum with prefix {prefix}")
    else:
        val = -1
        got = {}
        for attr in aset["attributes"]:
            val = attr.get("value", val + 1)
            got[c_name(aset["name-prefix"], attr["name"])] = val
        if got != want:
            problems.append(f"spec {got} != header {want}")
    case(f"attribute set {aset['name']} matches the header", problems)

ops = {c_name("dmsc-cmd-", op["name"]): i for i, op in enumerate(spec["operations"]["list"])}
want = c_enum("DMSC_CMD_")
case("operations match enum dmsc_cmd", [] if ops == want else [f"spec {ops} != header {want}"])

for d in spec["definitions"]:
    want = c_enum(c_name(d["name-prefix"], ""))
    if d["type"] == "flags":
        got = {c_name(d["name-prefix"], e): 1 << i for i, e in enumerate(d["entries"])}
    else:
        got = {c_name(d["name-prefix"], e): i for i, e in enumerate(d["entries"])}
    # Header names may be shorter than YNL's (encap-red is ENCAP_RED).
    case(f"definition {d['name']} matches the header",
         [] if got == want else [f"spec {got} != header {want}"])

fam = re.search(r'#define DMSC_GENL_NAME\s+"(\w+)"', header).group(1)
grp = re.search(r'#define DMSC_MCGRP_EVENTS\s+"(\w+)"', header).group(1)
case("family and group names match",
     [] if (fam, grp) == (spec["name"], spec["mcast-groups"]["list"][0]["name"])
     else [f"{fam}/{grp} in the header"])

print("TAP version 13")
print(f"1..{len(cases)}")
failed = 0
for i, (desc, problems) in enumerate(cases, 1):
    if problems:
        failed += 1
        for p in problems:
            print(f"# {p}")
        print(f"not ok {i} ynl: {desc}")
    else:
        print(f"ok {i} ynl: {desc}")
sys.exit(1 if failed else 0)
