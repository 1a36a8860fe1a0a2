#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hold Documentation/netlink/specs/dmsc.yaml against the kernel's YNL
tools and against uapi/linux/dmsc.h.

1. The spec must validate against the jsonschema of its protocol from the
   kernel's own tree (Documentation/netlink/PROTOCOL.yaml of
   linux-source-6.12, unpacked by tools/install-deps.sh; DMSC_YNL_SRC names
   another tree).
2. The kernel's own generator, tools/net/ynl/ynl-gen-c.py --mode uapi
   --header, must render a uapi header from it.
3. That header and uapi/linux/dmsc.h must agree: each enum of the
   generated header has the same names in the same order in the enum of
   the same tag in ours, ours has no DMSC_ enum the spec lacks, every
   define the generator writes is in ours, and the C compiler, given both
   headers in one program (the generated one renamed to YNL_DMSC_*),
   finds every value equal.

Prints KTAP, one case per check. -o FILE also writes the generated header.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import jsonschema
import yaml

top = Path(__file__).resolve().parent.parent
spec_file = top / "Documentation/netlink/specs/dmsc.yaml"
uapi_file = top / "uapi/linux/dmsc.h"
ksrc = Path(os.environ.get("DMSC_YNL_SRC", "/usr/src/linux-source-6.12"))
cc = os.environ.get("CC", "cc")
out_file = sys.argv[2] if len(sys.argv) == 3 and sys.argv[1] == "-o" else None

spec = yaml.safe_load(spec_file.read_text())
proto = spec.get("protocol", "genetlink")
schema_file = ksrc / "Documentation/netlink" / f"{proto}.yaml"
gen_c = ksrc / "tools/net/ynl/ynl-gen-c.py"

cases = []


def case(desc, problems):
    cases.append((desc, problems))


def validate():
    if not schema_file.is_file():
        return [f"no {schema_file} (run tools/install-deps.sh)"]
    schema = yaml.safe_load(schema_file.read_text())
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(spec),
                    key=lambda e: list(e.path))
    return [f"{'/'.join(map(str, e.path)) or '(top)'}: {e.message}"
            for e in errors]


def render(tmp):
    """Run ynl-gen-c.py on the spec; return (header text or None, problems).

    The generator wants a kernel tree around the spec: it takes the schema
    from ../PROTOCOL.yaml beside the spec's directory and names the spec
    relative to the nearest directory holding MAINTAINERS. Give it one.
    """
    if not gen_c.is_file():
        return None, [f"no {gen_c} (run tools/install-deps.sh)"]
    specs = tmp / "Documentation/netlink/specs"
    specs.mkdir(parents=True)
    (tmp / "MAINTAINERS").touch()
    shutil.copy(spec_file, specs / "dmsc.yaml")
    os.symlink(schema_file, specs.parent / schema_file.name)
    gen = tmp / "gen.h"
    try:
        r = subprocess.run([sys.executable, str(gen_c), "--mode", "uapi",
                            "--header", "--spec", str(specs / "dmsc.yaml"),
                            "-o", str(gen)],
                           capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return None, ["ynl-gen-c.py did not finish in 60 s"]
    if r.returncode != 0 or not gen.is_file():
        # A traceback ends in a dump of the whole spec: keep its reason.
        out = (r.stdout + r.stderr).strip().splitlines()
        msg = [l for l in out if re.match(r"\w+(\.\w+)*(Error|Exception): ", l)]
        return None, [f"ynl-gen-c.py exit {r.returncode}"] + (msg or out[-5:])
    return gen.read_text(), []


def enums(text):
    """{tag: [enumerator names]} of a header; an enum without a tag is
    keyed by its first name. Values are left to the compiler."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
    out = {}
    for tag, body in re.findall(r"\benum\s*(\w*)\s*\{(.*?)\}", text, re.S):
        names = [e.split("=")[0].strip() for e in body.split(",")]
        names = [n for n in names if n]
        out[tag or names[0]] = names
    return out


def macros(header):
    """{name: body} of the DMSC_ macros a header defines, from cc -dM."""
    r = subprocess.run([cc, "-dM", "-E", "-x", "c", "-"], input=f'#include "{header}"\n',
                       capture_output=True, text=True, check=True)
    out = {}
    for line in r.stdout.splitlines():
        m = re.match(r"#define (DMSC_\w+) (.*)", line)
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


def values(tmp, gen_text, names, strings):
    """(uapi, generated) value of each name, as the C compiler sees them
    with both headers in one program."""
    renamed = re.sub(r"\b(__)?DMSC_", r"\1YNL_DMSC_", gen_text)
    renamed = re.sub(r"\benum dmsc_", "enum ynl_dmsc_", renamed)
    renamed = renamed.replace("_UAPI_LINUX_DMSC_H", "_YNL_GEN_DMSC_H")
    (tmp / "ynl_gen.h").write_text(renamed)
    lines = [f'#include "{uapi_file}"', '#include "ynl_gen.h"',
             "#include <stdio.h>", "int main(void)", "{"]
    for n in names:
        y = re.sub(r"^(__)?DMSC_", r"\1YNL_DMSC_", n)
        if n in strings:
            lines.append(f'\tprintf("%s\\t%s\\t%s\\n", "{n}", {n}, {y});')
        else:
            lines.append(f'\tprintf("%s\\t%lld\\t%lld\\n", "{n}", '
                         f'(long long)({n}), (long long)({y}));')
    lines += ["\treturn 0;", "}"]
    (tmp / "cmp.c").write_text("\n".join(lines) + "\n")
    exe = tmp / "cmp"
    r = subprocess.run([cc, "-Wall", "-Wextra", "-Werror", "-I", str(tmp),
                        "-o", str(exe), str(tmp / "cmp.c")],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, [f"cc: {l}" for l in r.stderr.splitlines() if "error" in l][:10]
    r = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
    return [l.split("\t") for l in r.stdout.splitlines()], []


def compare(tmp, gen_text):
    header = uapi_file.read_text()
    ours, theirs = enums(header), enums(gen_text)
    ours = {t: n for t, n in ours.items() if n[0].lstrip("_").startswith("DMSC_")}
    our_macros = macros(uapi_file)
    (tmp / "gen_only.h").write_text(gen_text)
    gen_macros = macros(tmp / "gen_only.h")

    for tag, names in theirs.items():
        # render-max writes DMSC_MODE_MAX as an enumerator, our header as
        # a define; the values are compared below either way.
        want = [n for n in names if n not in our_macros]
        got = ours.get(tag)
        if got is None:
            problems = [f"no enum {tag} in {uapi_file.name}"]
        elif got != want:
            problems = [f"spec:   {' '.join(want)}", f"header: {' '.join(got)}"]
        else:
            problems = []
        case(f"enum {tag}: the header has the spec's names in order", problems)

    extra = sorted(set(ours) - set(theirs))
    case("the header has no enum the spec lacks",
         [f"enum {t} ({ours[t][0]}, ...) is not in the spec" for t in extra])

    missing = sorted(set(gen_macros) - set(our_macros))
    case("the header defines every constant the spec has",
         [f"{n} ({gen_macros[n]}) is not defined in {uapi_file.name}" for n in missing])

    our_names = set(our_macros) | {n for ns in ours.values() for n in ns}
    names = [n for ns in theirs.values() for n in ns if n in our_names]
    names += [n for n in gen_macros if n in our_macros]
    strings = {n for n in gen_macros if gen_macros[n].startswith('"')}
    got, problems = values(tmp, gen_text, names, strings)
    if got is not None:
        problems = [f"{n}: header {a}, spec {b}" for n, a, b in got if a != b]
        if len(got) != len(names):
            problems.append(f"{len(got)} values printed for {len(names)} names")
    case(f"the C compiler finds all {len(names)} values equal", problems)


case(f"spec validates against the kernel's {schema_file.name}", validate())
with tempfile.TemporaryDirectory(prefix="dmsc-ynl.") as d:
    gen_text, problems = render(Path(d) / "tree")
    case("the kernel's ynl-gen-c.py renders a uapi header from the spec", problems)
    if gen_text is not None:
        if out_file:
            Path(out_file).write_text(gen_text)
        compare(Path(d), gen_text)

print("TAP version 13")
print(f"1..{len(cases)}")
failed = 0
for i, (desc, problems) in enumerate(cases, 1):
    for p in problems:
        print(f"# {p}")
    if problems:
        failed += 1
        print(f"not ok {i} ynl: {desc}")
    else:
        print(f"ok {i} ynl: {desc}")
sys.exit(1 if failed else 0)
