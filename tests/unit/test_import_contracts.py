"""The `acyclic_modules` import-linter contract (tests/import_contracts.py): it fails on a real import cycle
between modules and shows the loop, but not on packages that merely depend on each other in both directions."""

from __future__ import annotations

import grimp

from tests.import_contracts import AcyclicModulesContract


def _graph(*imports: tuple[str, str]) -> grimp.ImportGraph:
    graph = grimp.ImportGraph()
    for name in {".".join(m.split(".")[:i]) for pair in imports for m in pair for i in range(1, m.count(".") + 2)}:
        graph.add_module(name)
    for importer, imported in imports:
        graph.add_import(importer=importer, imported=imported, line_number=7, line_contents=f"import {imported}")
    return graph


def _check(graph: grimp.ImportGraph) -> tuple[bool, list[list[str]]]:
    contract = AcyclicModulesContract(name="acyclic", session_options={}, contract_options={"packages": ["pa"]})
    check = contract.check(graph, verbose=False)
    return check.kept, check.metadata["loops"]


def test_a_cycle_through_three_packages_is_shown_as_its_loop() -> None:
    kept, loops = _check(
        _graph(
            ("pa.engine.runner", "pa.durable.approvals"),
            ("pa.durable.approvals", "pa.runs.drivers"),
            ("pa.runs.drivers", "pa.engine.runner"),
            ("pa.runs.drivers", "pa.runs.store"),
        )
    )
    assert not kept
    assert loops == [
        [
            "pa.durable.approvals -> pa.runs.drivers (l. 7)",
            "pa.runs.drivers -> pa.engine.runner (l. 7)",
            "pa.engine.runner -> pa.durable.approvals (l. 7)",
        ]
    ]


def test_packages_importing_each_other_without_a_module_cycle_pass() -> None:
    # engine uses the run store, and the run drivers use the engine: one-way between modules.
    kept, loops = _check(_graph(("pa.engine.runner", "pa.runs.store"), ("pa.runs.drivers", "pa.engine.runner")))
    assert kept and loops == []
