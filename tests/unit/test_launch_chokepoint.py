"""Runs are stored only through the launch chokepoint (DESIGN.md, frozen contract 12): outside the runs store,
`insert_run(` is called only by `lifecycle/launch.py`'s `store_prepared`. The one exception left is the engine's
delegation, which stores a parent's children in the transaction of the parent's checkpoint (issue 29: children
through the chokepoint too, once the engine hands them to the lifecycle instead of storing them)."""

from __future__ import annotations

from pathlib import Path

LIBRARY = Path(__file__).resolve().parents[2] / "shared" / "personal_agent"
CHOKEPOINT = LIBRARY / "lifecycle" / "launch.py"
NOT_YET = {LIBRARY / "engine" / "delegation.py"}


def test_runs_are_stored_only_through_the_launch_chokepoint() -> None:
    callers = {
        path.relative_to(LIBRARY).as_posix()
        for path in LIBRARY.rglob("*.py")
        if "insert_run(" in path.read_text() and path != LIBRARY / "runs" / "store.py"
    }
    assert callers == {p.relative_to(LIBRARY).as_posix() for p in {CHOKEPOINT, *NOT_YET}}
    launch = CHOKEPOINT.read_text()
    assert launch.count("insert_run(") == 1 and "async def store_prepared(" in launch
