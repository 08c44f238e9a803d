#!/usr/bin/env python3
"""Fail when sibling modules of a workspace crate import each other (a module cycle).

Edges come from the `crate::`, `super::` and `self::` paths of every file under
`<crate>/src`, with `pub use` re-exports followed to the module that defines the name (so
`crate::ToolResult`, re-exported at the root, counts as an import of `result`). An edge
from `a::x` to `b::y` is the sibling edge `a -> b`; a module's imports of its own
descendants or ancestors are not sibling edges.

    .ci/module-cycles.py [ROOT]        check the workspace at ROOT (default: .)
    .ci/module-cycles.py --self-test   check that a planted cycle is found
"""
import os
import re
import sys
import tempfile
from collections import defaultdict

USE = re.compile(r"\buse\s+((?:crate|super|self)::[^;]*);", re.S)
PUB_USE = re.compile(r"\bpub(?:\([\w:]+\))?\s+use\s+([^;]*);", re.S)
PATH = re.compile(r"\b((?:crate|super)(?:::\w+)+)")


def split_top(inner):
    parts, depth, cur = [], 0, ""
    for ch in inner:
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [p.strip() for p in parts + [cur] if p.strip()]


def expand(tree):
    """`a::{b, c::{d, e}}` -> `a::b`, `a::c::d`, `a::c::e`."""
    m = re.match(r"^([\w:]*)\{(.*)\}$", tree.strip(), re.S)
    if not m:
        return [tree.strip()]
    return [m.group(1) + leaf for part in split_top(m.group(2)) for leaf in expand(part)]


def module_of(src, path):
    parts = os.path.relpath(path, src)[:-3].split(os.sep)
    return tuple(parts[:-1] if parts[-1] in ("mod", "lib", "main") else parts)


def resolve(here, path, modules):
    """The absolute segments of `path` written in module `here`, or None if external."""
    segs = [s.strip() for s in path.split(" as ")[0].split("::")]
    if segs[0] == "crate":
        return segs[1:]
    if segs[0] in ("super", "self"):
        cur = list(here)
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super" and cur:
                cur.pop()
            segs = segs[1:]
        return cur + segs
    if tuple(here) + (segs[0],) in modules:
        return list(here) + segs
    return None


def crate_cycles(src):
    files = [os.path.join(d, f) for d, _, fs in os.walk(src) for f in fs if f.endswith(".rs")]
    modules = {module_of(src, f) for f in files}
    texts = {f: re.sub(r"//[^\n]*", "", open(f, encoding="utf-8").read()) for f in files}
    reexports = {}
    for f, text in texts.items():
        here = module_of(src, f)
        for m in PUB_USE.finditer(text):
            for p in expand(m.group(1)):
                target = resolve(here, p, modules)
                if target:
                    reexports[(here, p.split(" as ")[-1].split("::")[-1].strip())] = target
    edges = defaultdict(lambda: defaultdict(dict))  # parent -> a -> {b: [witness]}
    for f, text in texts.items():
        here = module_of(src, f)
        paths = [p for m in USE.finditer(text) for p in expand(m.group(1))]
        paths += PATH.findall(text)
        for p in paths:
            target = resolve(here, p, modules)
            if target is None:
                continue
            target = [s for s in target if re.fullmatch(r"\w+", s)]
            for _ in range(8):  # follow re-exports to the defining module
                for k in range(len(target), 0, -1):
                    key = (tuple(target[: k - 1]), target[k - 1])
                    if tuple(target[:k]) not in modules and key in reexports:
                        target = reexports[key] + target[k:]
                        break
                else:
                    break
            best = next((tuple(target[:k]) for k in range(len(target), 0, -1)
                         if tuple(target[:k]) in modules), ())
            k = 0
            while k < min(len(here), len(best)) and here[k] == best[k]:
                k += 1
            if k < len(here) and k < len(best):
                edges[here[:k]][here[k]].setdefault(best[k], f"{os.path.relpath(f, src)}: {p}")
    for parent, graph in edges.items():
        for comp in sccs(graph):
            yield parent, comp, [(a, b, graph[a][b]) for a in comp for b in graph[a] if b in comp]


def sccs(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, {}):
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

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def check(root):
    found = 0
    for crate in sorted(os.listdir(root)):
        src = os.path.join(root, crate, "src")
        if not os.path.isdir(src):
            continue
        for parent, comp, ties in crate_cycles(src):
            found += 1
            print(f"{crate}: module cycle in {'::'.join(parent) or 'the crate root'}: {' <-> '.join(comp)}")
            for a, b, witness in ties:
                print(f"    {a} -> {b}  ({witness})")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as root:
        src = os.path.join(root, "demo", "src")
        os.makedirs(os.path.join(src, "inner"))
        files = {
            "lib.rs": "mod a;\nmod b;\nmod inner;\npub use b::Thing;\n",
            "a.rs": "use crate::Thing;\npub struct A;\n",
            "b.rs": "pub struct Thing(crate::a::A);\n",
            "inner/mod.rs": "mod x;\nmod y;\n",
            "inner/x.rs": "use super::y::Y;\npub struct X;\n",
            "inner/y.rs": "pub struct Y(super::x::X);\n",
        }
        for name, text in files.items():
            with open(os.path.join(src, name), "w", encoding="utf-8") as fh:
                fh.write(text)
        found = sorted((p, tuple(c)) for p, c, _ in crate_cycles(src))
        want = [((), ("a", "b")), (("inner",), ("x", "y"))]
        assert found == want, f"planted cycles {want}, found {found}"
    print("module-cycles self-test: the planted cycles were found")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        sys.exit(0)
    n = check(sys.argv[1] if len(sys.argv) > 1 else ".")
    if n:
        print(f"{n} module cycle(s): move what both sides need below them", file=sys.stderr)
        sys.exit(1)
    print("no module cycle in any crate")
