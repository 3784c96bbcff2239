"""The shape of `shared/`: no function over 60 lines, and no module over 300 lines unless its docstring says
why, in a sentence that starts "Over 300 lines because" (a module that long should be two, or say why not)."""

from __future__ import annotations

import ast
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 300
LONG_MODULE_REASON = "Over 300 lines because"


def _modules() -> list[tuple[str, ast.Module, int]]:
    found = []
    for path in sorted(SHARED.rglob("*.py")):
        text = path.read_text()
        found.append((str(path.relative_to(SHARED)), ast.parse(text), len(text.splitlines())))
    return found


def test_no_function_is_over_60_lines() -> None:
    long = [
        f"{name}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for name, tree, _ in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == []


def test_no_module_is_over_300_lines_without_a_reason() -> None:
    long = [
        f"{name} ({lines} lines)"
        for name, tree, lines in _modules()
        if lines > MAX_MODULE_LINES and LONG_MODULE_REASON not in (ast.get_docstring(tree) or "")
    ]
    assert long == []
