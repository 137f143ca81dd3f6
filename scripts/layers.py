#!/usr/bin/env python3
"""The module's files call each other only downward.

    scripts/layers.py DIR      DIR holds the built dm-hottier-*.o

Reads each object's symbol table with nm: a file calls another when it
uses (U) a symbol the other defines. Fails on any circle among the files
(a strongly connected component of more than one file, printed with the
calls that make it), on any call from the pure core into the rest, and on
any call from one layer into a layer above it. The layers, lowest first,
are README.md's (*Layout*); a file missing from LAYERS is an error, so a
new file must be given its place. KUnit objects
(*-test.o) are left out. Prints the graph, then "layers: N passed, N
failed".
"""

import collections
import glob
import os
import subprocess
import sys

PREFIX = "dm-hottier-"

# The pure core has no bio in its interfaces; the replica core carries out
# what the policy decides; its clients keep records, copy and compare; io
# is the data path; the administrator's side is on top.
LAYERS = [
    ("pure core", ["args", "meta", "heat", "route", "map", "policy"]),
    ("replica core", ["core"]),
    ("clients", ["persist", "migrate", "scrub"]),
    ("io", ["io"]),
    ("administrator's side", ["status", "message", "sysfs", "target"]),
]
RANK = {f: i for i, (_, files) in enumerate(LAYERS) for f in files}


def symbols(path):
    """(defined, undefined) symbol names of one object."""
    out = subprocess.run(["nm", path], check=True, capture_output=True,
                         text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        words = line.split()
        if len(words) == 3 and words[1] in "TDRBtdrb":
            if words[1].isupper():
                defined.add(words[2])
        elif len(words) == 2 and words[0] == "U":
            undefined.add(words[1])
    return defined, undefined


def graph(objdir):
    """{file: {callee file: [symbols]}} over the module's objects."""
    objs = sorted(p for p in glob.glob(os.path.join(objdir, PREFIX + "*.o"))
                  if not p.endswith("-test.o") and not p.endswith(".mod.o"))
    owner, uses = {}, {}
    for path in objs:
        name = os.path.basename(path)[len(PREFIX):-2]
        defined, undefined = symbols(path)
        for s in defined:
            owner.setdefault(s, name)
        uses[name] = undefined
    calls = {f: collections.defaultdict(list) for f in uses}
    for f, undefined in uses.items():
        for s in sorted(undefined):
            g = owner.get(s)
            if g is not None and g != f:
                calls[f][g].append(s)
    return calls


def circles(calls):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in calls[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(calls):
        if v not in index:
            visit(v)
    return out


def check(calls):
    """The failures, one line each."""
    bad = []
    for f in sorted(calls):
        if f not in RANK:
            bad.append(f"{PREFIX}{f}.o is in no layer: add it to LAYERS")
    for comp in circles(calls):
        inner = [f"{f} -> {g} ({', '.join(calls[f][g][:3])})"
                 for f in comp for g in sorted(calls[f]) if g in comp]
        bad.append(f"circle of {len(comp)} files: {', '.join(comp)}: "
                   + "; ".join(inner))
    for f in sorted(calls):
        for g in sorted(calls[f]):
            if f not in RANK or g not in RANK or RANK[g] <= RANK[f]:
                continue
            what = ("a call up from the pure core" if RANK[f] == 0
                    else "a call up")
            bad.append(f"{what}: {f} ({LAYERS[RANK[f]][0]}) -> {g} "
                       f"({LAYERS[RANK[g]][0]}): "
                       f"{', '.join(calls[f][g][:5])}")
    return bad


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    calls = graph(argv[1])
    if not calls:
        print(f"FAIL no {PREFIX}*.o in {argv[1]}")
        print("layers: 0 passed, 1 failed")
        return 1
    for f in sorted(calls, key=lambda f: (RANK.get(f, -1), f)):
        print(f"{f}: " + (" ".join(sorted(calls[f])) or "-"))
    bad = check(calls)
    for line in bad:
        print(f"FAIL {line}")
    print(f"layers: {0 if bad else 1} passed, {len(bad)} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
