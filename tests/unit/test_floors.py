"""The folders are the floors: every folder under personal_agent has its floor in the `floors` layers contract
(pyproject.toml), so a new folder cannot sit outside the plan, and the folder-level import graph has no knot."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import grimp

from tests.import_contracts import strongly_connected

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "shared" / "personal_agent"


def _floors() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == "floors"]
    layers: list[str] = contract["layers"]
    return layers


def test_every_folder_has_a_floor() -> None:
    folders = {p.parent.name for p in LIBRARY.glob("*/__init__.py")}
    named = {m.group(1) for layer in _floors() for m in re.finditer(r"personal_agent\.(\w+)", layer)}
    assert folders - named == set(), "add the new folder to the floors contract in pyproject.toml"
    assert named - folders <= {"cli"}, "the floors contract names a folder that is gone"


def test_no_two_folders_import_each_other() -> None:
    graph = grimp.build_graph("personal_agent", cache_dir=None)
    edges: dict[str, set[str]] = {}
    for module in graph.modules:
        parts = module.split(".")
        if len(parts) < 3:  # a top-level module (errors, settings, ...) is nobody's folder
            continue
        for imported in graph.find_modules_directly_imported_by(module):
            other = imported.split(".")
            if len(other) >= 3 and other[1] != parts[1]:
                edges.setdefault(parts[1], set()).add(other[1])
                edges.setdefault(other[1], set())
    assert strongly_connected(edges) == []
