"""One sandbox session per run, in the process that runs it: opened by the run's first `run_python` call, kept
while the run uses it (its variables and scratch files last between calls), closed when the run ends
(`engine/finish.py`) or after `idle_seconds` unused, whichever comes first. A session belongs to one org and one
run: two runs, of the same org or not, never share a kernel."""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass
from uuid import UUID

from personal_agent.sandbox.config import SandboxConfig
from personal_agent.sandbox.interface import Availability, Backend, Session

MAX_SESSIONS = 16
"""Sessions one process keeps at once; past it the least recently used one is closed."""


class SandboxUnavailable(RuntimeError):
    """No backend can run code here (the reason is its availability's detail)."""


class _Off:
    def __init__(self, detail: str) -> None:
        self.detail = detail

    def availability(self) -> Availability:
        return Availability(False, self.detail)

    async def open(self, org_id: str) -> Session:
        raise SandboxUnavailable(self.detail)


@functools.cache
def config() -> SandboxConfig:
    return SandboxConfig.from_environment()


@functools.cache
def backend() -> Backend:
    """The deployment's backend (PA_SANDBOX_BACKEND; local by default on `pa dev` and in tests)."""
    cfg = config()
    if cfg.backend == "local":
        from personal_agent.sandbox.bubblewrap import BubblewrapBackend

        return BubblewrapBackend(cfg.limits)
    if cfg.backend == "lambda":
        from personal_agent.sandbox.lambda_backend import LambdaBackend

        return LambdaBackend(cfg.function_name, cfg.limits)
    return _Off("code execution is off in this deployment (PA_SANDBOX_BACKEND=off)")


def availability() -> Availability:
    return backend().availability()


@dataclass
class _Entry:
    org_id: UUID
    session: Session
    timer: asyncio.TimerHandle | None = None


_sessions: dict[UUID, _Entry] = {}
_opening: dict[UUID, asyncio.Lock] = {}


async def session_for(org_id: UUID, run_id: UUID) -> Session:
    """The run's session, opened on first use (a session that ended, by a limit or a crash, is replaced)."""
    lock = _opening.setdefault(run_id, asyncio.Lock())
    async with lock:
        entry = _sessions.get(run_id)
        if entry is not None and entry.org_id != org_id:  # never: a run id is one org's; refuse rather than share
            raise SandboxUnavailable("the sandbox session belongs to another organisation")
        if entry is None or not entry.session.alive:
            if entry is not None:
                await _close(run_id)
            await _make_room()
            entry = _Entry(org_id, await backend().open(str(org_id)))
            _sessions[run_id] = entry
        _touch(run_id, entry)
        return entry.session


def _touch(run_id: UUID, entry: _Entry) -> None:
    """Restart the session's idle timer (and keep it last in the LRU order)."""
    if entry.timer is not None:
        entry.timer.cancel()
    loop = asyncio.get_running_loop()
    entry.timer = loop.call_later(config().limits.idle_seconds, lambda: loop.create_task(close_run(run_id)))
    _sessions.pop(run_id, None)
    _sessions[run_id] = entry


async def _make_room() -> None:
    while len(_sessions) >= MAX_SESSIONS:
        await _close(next(iter(_sessions)))


async def _close(run_id: UUID) -> None:
    entry = _sessions.pop(run_id, None)
    if entry is None:
        return
    if entry.timer is not None:
        entry.timer.cancel()
    await entry.session.close()


async def close_run(run_id: UUID) -> None:
    """End the run's session, if it has one: its kernel killed, its scratch directory gone."""
    await _close(run_id)
    lock = _opening.get(run_id)
    if lock is not None and not lock.locked():
        _opening.pop(run_id, None)


def open_sessions() -> int:
    return len(_sessions)
