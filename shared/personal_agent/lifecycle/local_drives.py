"""The inline drives this process runs as tasks (`drivers.start_run`), per event loop: a process may run more than
one loop (a test's and a server thread's), and each waits for, or stops, only its own."""

from __future__ import annotations

import asyncio
from uuid import UUID

_tasks: set[asyncio.Task[str]] = set()


def task_name(run_id: UUID) -> str:
    return f"run-{run_id}"


def track(task: asyncio.Task[str]) -> None:
    """Keep the drive's task (named `task_name`) until it ends."""
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)


def _on_this_loop() -> list[asyncio.Task[str]]:
    loop = asyncio.get_running_loop()
    return [task for task in _tasks if task.get_loop() is loop]


async def wait_for_drive(run_id: UUID) -> None:
    """Wait until the drive of `run_id` that this event loop started ends (at once when there is none)."""
    name = task_name(run_id)
    for task in _on_this_loop():
        if task.get_name() == name:
            await asyncio.wait([task])


async def wait_for_local_runs() -> None:
    """Wait for the inline runs this event loop started (tests, shutdown)."""
    while mine := _on_this_loop():
        await asyncio.gather(*mine, return_exceptions=True)


async def stop_local_runs() -> None:
    """Stop the inline runs this event loop drives (dev server shutdown): each releases its lease, so the next
    start resumes it from its last checkpoint instead of leaving it `running`."""
    for task in _on_this_loop():
        task.cancel()
    await wait_for_local_runs()
