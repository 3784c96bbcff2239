"""The folder-level import graph under shared/personal_agent: the knots and the imports that run back up.

A folder is a package directly under `personal_agent` (`runs`, `engine`, ...); top-level modules (`errors.py`,
`settings.py`, ...) are left out, as the issue counts them. The graph comes from grimp, import-linter's engine.
A knot is a strongly connected group of folders. Back-edges are the folder imports that point up once the
folders are put in the order with the fewest of them (Eades-Lin-Smyth greedy order, then a local
improvement), so the figure is what would have to go for the knot to untie; each is printed with the module
imports behind it.

    .venv/bin/python bench/folder_graph.py [--verbose]
"""

from __future__ import annotations

import sys
from collections import defaultdict

import grimp

sys.path.insert(0, ".")
from tests.import_contracts import strongly_connected  # noqa: E402

ROOT = "personal_agent"


def folder_edges(graph: grimp.ImportGraph) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(importer folder, imported folder) -> the module imports behind it."""
    folders = {m.split(".")[1] for m in graph.modules if m.startswith(ROOT + ".") and graph.find_children(m)}
    folders |= {m.split(".")[1] for m in graph.modules if m.count(".") >= 2 and m.startswith(ROOT + ".")}
    edges: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for module in graph.modules:
        parts = module.split(".")
        if parts[0] != ROOT or len(parts) < 2 or parts[1] not in folders:
            continue
        for imported in graph.find_modules_directly_imported_by(module):
            other = imported.split(".")
            if other[0] == ROOT and len(other) >= 2 and other[1] in folders and other[1] != parts[1]:
                edges[(parts[1], other[1])].append((module, imported))
    return edges


def greedy_order(nodes: set[str], arcs: set[tuple[str, str]]) -> list[str]:
    """An order (top first) with few arcs pointing up: sinks last, sources first, else the most outgoing."""
    out: dict[str, set[str]] = {n: {b for a, b in arcs if a == n and b in nodes} for n in nodes}
    inc: dict[str, set[str]] = {n: {a for a, b in arcs if b == n and a in nodes} for n in nodes}
    head: list[str] = []
    tail: list[str] = []
    left = set(nodes)

    def drop(n: str) -> None:
        left.discard(n)
        for m in out.pop(n):
            inc[m].discard(n)
        for m in inc.pop(n):
            out[m].discard(n)

    while left:
        sinks = sorted(n for n in left if not out[n])
        sources = sorted(n for n in left if not inc[n])
        if sinks:
            for n in sinks:
                tail.insert(0, n)
                drop(n)
        elif sources:
            for n in sources:
                head.append(n)
                drop(n)
        else:
            best = max(sorted(left), key=lambda n: len(out[n]) - len(inc[n]))
            head.append(best)
            drop(best)
    return improve(head + tail, arcs)


def back_arcs(order: list[str], arcs: set[tuple[str, str]]) -> list[tuple[str, str]]:
    rank = {n: i for i, n in enumerate(order)}
    return sorted((a, b) for a, b in arcs if a in rank and b in rank and rank[a] > rank[b])


def improve(order: list[str], arcs: set[tuple[str, str]]) -> list[str]:
    """Move single folders to the place that lowers the back-arc count, until nothing moves."""
    best = len(back_arcs(order, arcs))
    changed = True
    while changed:
        changed = False
        for node in list(order):
            rest = [n for n in order if n != node]
            for i in range(len(rest) + 1):
                candidate = rest[:i] + [node] + rest[i:]
                count = len(back_arcs(candidate, arcs))
                if count < best:
                    order, best, changed = candidate, count, True
    return order


def main() -> None:
    verbose = "--verbose" in sys.argv
    graph = grimp.build_graph(ROOT, cache_dir=None)
    edges = folder_edges(graph)
    arcs = set(edges)
    adjacency: dict[str, set[str]] = defaultdict(set)
    for a, b in arcs:
        adjacency[a].add(b)
        adjacency.setdefault(b, set())
    knots = strongly_connected(dict(adjacency))
    total_back: list[tuple[str, str]] = []
    folders = sorted(adjacency)
    print(f"{len(folders)} folders, {len(arcs)} folder-level imports")
    for knot in knots:
        inner = {(a, b) for a, b in arcs if a in knot and b in knot}
        order = greedy_order(knot, inner)
        back = back_arcs(order, inner)
        total_back += back
        print(f"knot of {len(knot)} folders (top first): {' > '.join(order)}")
        for a, b in back:
            imports = edges[(a, b)]
            shown = ", ".join(f"{m} -> {i}" for m, i in imports[: None if verbose else 2])
            more = "" if verbose or len(imports) <= 2 else f" (+{len(imports) - 2})"
            print(f"  back-edge {a} -> {b}: {shown}{more}")
    print(f"strongly connected folders: {sum(len(k) for k in knots)} in {len(knots)} knot(s)")
    print(f"folder-level back-edges: {len(total_back)}")


if __name__ == "__main__":
    main()
