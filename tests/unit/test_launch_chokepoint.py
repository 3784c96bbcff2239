"""Runs are stored only through the launch chokepoint (DESIGN.md, frozen contract 12): outside the runs store,
`insert_run(` is called only by `store_prepared` (`lifecycle/stored_runs.py`, which `lifecycle/launch.py`
re-exports), and every run the platform creates goes through it: a chat turn, a skipped trigger run, and a
sub-agent's children, which the lifecycle stores once the engine handed them over (the engine stores no run)."""

from __future__ import annotations

from pathlib import Path

LIBRARY = Path(__file__).resolve().parents[2] / "shared" / "personal_agent"
CHOKEPOINT = LIBRARY / "lifecycle" / "stored_runs.py"
CREATORS = {"lifecycle/launch.py", "lifecycle/child_runs.py", "workflows/triggers.py"}


def test_runs_are_stored_only_through_the_launch_chokepoint() -> None:
    sources = {path.relative_to(LIBRARY).as_posix(): path.read_text() for path in LIBRARY.rglob("*.py")}
    callers = {name for name, text in sources.items() if "insert_run(" in text and name != "runs/store.py"}
    assert callers == {CHOKEPOINT.relative_to(LIBRARY).as_posix()}
    chokepoint = CHOKEPOINT.read_text()
    assert chokepoint.count("insert_run(") == 1 and "async def store_prepared(" in chokepoint
    assert {name for name, text in sources.items() if "await store_prepared(" in text} == CREATORS
    assert "await store_prepared(" not in chokepoint.split("async def store_prepared(")[0]
