"""The project's own import-linter contract type, loaded by `lint-imports` through `[tool.importlinter]`.

`acyclic_modules`: no import cycle between any two modules under the given packages. import-linter's
built-in `acyclic_siblings` compares whole packages, so `engine -> runs.store` beside `runs.drivers -> engine`
would count as a cycle although no module imports itself back; this one finds the real cycles (strongly
connected modules) and prints one loop for each, with the line of every import in it.
"""

from __future__ import annotations

from collections.abc import Iterable

import grimp
from importlinter import Contract, ContractCheck, fields, output


class AcyclicModulesContract(Contract):
    """Fail when a module under `packages` reaches itself again through its imports."""

    type_name = "acyclic_modules"

    packages = fields.ListField(subfield=fields.StringField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        modules: set[str] = set()
        for package in self.packages:  # type: ignore[attr-defined]
            modules |= {package, *graph.find_descendants(package)}
        edges = {m: graph.find_modules_directly_imported_by(m) & modules for m in modules}
        loops = [_shortest_loop(component, edges) for component in strongly_connected(edges)]
        described = [[_describe(graph, a, b) for a, b in zip(loop, loop[1:] + loop[:1], strict=True)] for loop in loops]
        return ContractCheck(kept=not loops, metadata={"loops": sorted(described)})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for loop in check.metadata["loops"]:
            output.print_error(f"Import cycle through {len(loop)} modules:")
            for step in loop:
                output.indent_cursor()
                output.print_error(f"- {step}")
            output.new_line()


def strongly_connected(edges: dict[str, set[str]]) -> list[set[str]]:
    """The groups of two or more modules that import each other, directly or not (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work: list[tuple[str, Iterable[str]]] = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(edges[succ]))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component: set[str] = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(component)
    return components


def _shortest_loop(component: set[str], edges: dict[str, set[str]]) -> list[str]:
    """The shortest cycle through the first module of a strongly connected group (breadth-first)."""
    start = min(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for succ in sorted(edges[node] & component):
                if succ == start:
                    loop = [node]
                    while loop[-1] != start:
                        loop.append(previous[loop[-1]])
                    return loop[::-1]
                if succ not in previous:
                    previous[succ] = node
                    following.append(succ)
        frontier = following
    raise AssertionError(f"{start} is in a cycle but no path leads back to it")


def _describe(graph: grimp.ImportGraph, importer: str, imported: str) -> str:
    lines = sorted({d["line_number"] for d in graph.get_import_details(importer=importer, imported=imported)})
    where = f" (l. {', '.join(map(str, lines))})" if lines else ""
    return f"{importer} -> {imported}{where}"
