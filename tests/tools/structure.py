#!/usr/bin/python3
"""The tree's structure rules, checked on the code itself (make structure-check):

  size     no C file over MAX_LINES lines
  cycles   no call cycle across more than two files: file a calls b when
           a's object file needs a function b's defines (nm), so only
           calls between files count; a <-> b is allowed, a -> b -> c -> a
           is not (nor a <-> b <-> c <-> a, a ring of mutual pairs)
  named    every C file of the programs is named in docs/ARCHITECTURE.md
  threads  every file that starts a thread is in its table of threads
  requests the control socket's requests in its table are those the
           coordinator's dispatch handles, no more, no fewer

Reads the object files of a build (build/obj by default: `make` first).
Prints each breach with what to do, and exits 1 if there is any."""

import argparse
import collections
import os
import re
import subprocess
import sys

MAX_LINES = 1100
DIRS = ("agent", "common", "coordinator", "ringctl", "proto")


def c_files(root):
    out = []
    for d in DIRS:
        p = os.path.join(root, d)
        for name in sorted(os.listdir(p)) if os.path.isdir(p) else []:
            if name.endswith(".c"):
                out.append(d + "/" + name)
    return out


def sizes(root, files):
    bad = []
    for f in files:
        with open(os.path.join(root, f), errors="replace") as fh:
            n = sum(1 for _ in fh)
        if n > MAX_LINES:
            bad.append("size: %s has %d lines (at most %d): split it by job"
                       % (f, n, MAX_LINES))
    return bad


def symbols(obj):
    """Functions an object defines, and the symbols it needs."""
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True,
                         check=True).stdout
    defined, needed = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind in ("T", "W"):
            defined.add(name)
        elif kind == "U":
            needed.add(name)
    return defined, needed


def call_graph(root, objdir, files):
    """file -> files it calls; files without an object are left out."""
    defined_by, needs = {}, {}
    for f in files:
        obj = os.path.join(root, objdir, f[:-2] + ".o")
        if not os.path.exists(obj):
            continue
        d, n = symbols(obj)
        needs[f] = n
        for s in d:
            defined_by[s] = f
    graph = {f: set() for f in needs}
    for f, n in needs.items():
        for s in n:
            g = defined_by.get(s)
            if g and g != f:
                graph[f].add(g)
    return graph


def sccs(graph):
    """Tarjan's strongly connected components (iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def path(graph, src, dst, within):
    """A shortest call path src -> dst inside one component."""
    prev = {src: None}
    q = collections.deque([src])
    while q:
        v = q.popleft()
        if v == dst:
            break
        for w in sorted(graph[v]):
            if w in within and w not in prev:
                prev[w] = v
                q.append(w)
    out, v = [], dst
    while v is not None:
        out.append(v)
        v = prev[v]
    return out[::-1]


def long_cycle(graph, comp):
    """A cycle of three or more files in one component, or None."""
    within = set(comp)
    for a in comp:
        for b in sorted(graph[a] & within):
            if a not in graph[b]:  # one way: back from b to a is >= 2 steps
                return path(graph, b, a, within) + [b]
    # Every call is mutual: a longer cycle is a cycle of the pairs.
    parent = {}
    for s in comp:
        if s in parent:
            continue
        parent[s] = None
        todo = [s]
        while todo:
            v = todo.pop()
            for w in sorted(graph[v] & within):
                if w == parent[v]:
                    continue
                if w in parent:
                    return [v, w] + ["..."]
                parent[w] = v
                todo.append(w)
    return None


def cycles(graph):
    bad = []
    for comp in sccs(graph):
        if len(comp) < 3:
            continue
        c = long_cycle(graph, comp)
        if c:
            bad.append("cycles: %d files call each other round (%s), e.g. %s:"
                       " move what they share into a module of its own"
                       % (len(comp), ", ".join(comp), " -> ".join(c)))
    return bad


def named(root, files):
    with open(os.path.join(root, "docs", "ARCHITECTURE.md")) as fh:
        text = fh.read()
    return ["named: %s is not in docs/ARCHITECTURE.md: add a row saying its"
            " one job" % f for f in files if "`%s`" % f not in text]


def section(text, title):
    start = text.find(title)
    if start < 0:
        return ""
    end = text.find("\n## ", start + len(title))
    return text[start:end if end >= 0 else len(text)]


def threads(root, files):
    with open(os.path.join(root, "docs", "ARCHITECTURE.md")) as fh:
        table = section(fh.read(), "## The event loop")
    bad = []
    for f in files:
        with open(os.path.join(root, f), errors="replace") as fh:
            if "pthread_create(" in fh.read() and "`%s`" % f not in table:
                bad.append("threads: %s starts a thread that ARCHITECTURE.md's"
                           " table of threads does not list: add it, with"
                           " why it is not the event loop" % f)
    return bad


def camel(upper):
    return "".join(w.capitalize() for w in upper.lower().split("_"))


def requests(root, files):
    code = set()
    for f in files:
        if f.startswith("coordinator/control"):
            with open(os.path.join(root, f), errors="replace") as fh:
                code |= {camel(m) + "Request" for m in re.findall(
                    r"RING__ENVELOPE__BODY_(\w+)_REQUEST\b", fh.read())}
    with open(os.path.join(root, "docs", "ARCHITECTURE.md")) as fh:
        table = section(fh.read(), "## The control socket's requests")
    doc = set(re.findall(r"^\| `(\w+Request)` \|", table, re.M))
    bad = ["requests: the dispatch in coordinator/control*.c handles %s,"
           " which ARCHITECTURE.md's table of requests lacks" % r
           for r in sorted(code - doc)]
    bad += ["requests: ARCHITECTURE.md lists %s, which the dispatch in"
            " coordinator/control*.c does not handle" % r
            for r in sorted(doc - code)]
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--obj", default="build/obj",
                    help="object files of a build, under --root")
    ap.add_argument("--only", choices=("size", "cycles", "named", "threads", "requests"),
                    action="append", help="these checks only")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    files = c_files(root)
    checks = a.only or ["size", "cycles", "named", "threads", "requests"]
    bad = []
    if "size" in checks:
        bad += sizes(root, files)
    if "cycles" in checks:
        if not os.path.isdir(os.path.join(root, a.obj)):
            print("structure: no %s under %s: build first (make)"
                  % (a.obj, root), file=sys.stderr)
            return 2
        graph = call_graph(root, a.obj, files)
        missing = [f for f in files if f not in graph]
        if missing:
            print("structure: no object for %s: build first (make)"
                  % ", ".join(missing), file=sys.stderr)
            return 2
        bad += cycles(graph)
    if "named" in checks:
        bad += named(root, files)
    if "threads" in checks:
        bad += threads(root, files)
    if "requests" in checks:
        bad += requests(root, files)
    for b in bad:
        print(b)
    print("structure: %d C files; %s: %d breach(es)"
          % (len(files), ", ".join(checks), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
