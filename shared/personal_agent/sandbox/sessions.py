"""One sandbox session per run, in the process that runs it: opened by the run's first `run_python` call, kept
while the run uses it (its variables and scratch files last between calls), closed when the run ends
(`engine/finish.py`) or after `idle_seconds` unused, whichever comes first. A session belongs to one org and one
run: two runs, of the same org or not, never share a kernel.

A durable run's session is also kept with the run (`durable_session.py`: a record in the run's sandbox prefix of
the bucket): each durable step closes the process's kernel when it ends (`lifecycle/durable_steps.py`: the next
step may run anywhere), and the next step's first call restores it. The run's end deletes the prefix."""

from __future__ import annotations

import asyncio
import functools
import logging
from dataclasses import dataclass
from uuid import UUID

from personal_agent.sandbox import run_files
from personal_agent.sandbox.config import SandboxConfig
from personal_agent.sandbox.durable_session import DurableSession
from personal_agent.sandbox.interface import Availability, Backend, Session
from personal_agent.spec.run_spec import RunSpec

log = logging.getLogger("personal_agent.sandbox")

MAX_SESSIONS = 16
"""Sessions one process keeps at once; past it the least recently used one is closed."""


class SandboxUnavailable(RuntimeError):
    """No backend can run code here (the reason is its availability's detail)."""


class _Off:
    def __init__(self, detail: str) -> None:
        self.detail = detail

    def availability(self) -> Availability:
        return Availability(False, self.detail)

    async def open(self, org_id: str, prefix: str = "") -> Session:
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


def _prefix(org_id: UUID, run_id: UUID) -> str:
    return run_files.run_prefix(org_id, run_id) if run_files.configured() else ""


async def _open(org_id: UUID, run_id: UUID, durable: bool) -> Session:
    prefix = _prefix(org_id, run_id)
    session = await backend().open(str(org_id), prefix)
    if not durable or not prefix:
        return session
    try:
        restored = DurableSession(session, prefix, await asyncio.to_thread(run_files.read_record, prefix))
        await restored.restore()
    except Exception as exc:  # the bucket (S3's error, no answer): no session rather than one without its past
        await session.close()
        raise SandboxUnavailable(f"the run's sandbox session could not be restored ({type(exc).__name__})") from exc
    return restored


async def session_for(org_id: UUID, run_id: UUID, durable: bool = False) -> Session:
    """The run's session, opened on first use (a session that ended, by a limit or a crash, is replaced); a durable
    run's is restored from its record when this process has none."""
    lock = _opening.setdefault(run_id, asyncio.Lock())
    async with lock:
        entry = _sessions.get(run_id)
        if entry is not None and entry.org_id != org_id:  # never: a run id is one org's; refuse rather than share
            raise SandboxUnavailable("the sandbox session belongs to another organisation")
        if entry is None or not entry.session.alive:
            if entry is not None:
                await _close(run_id)
            await _make_room()
            entry = _Entry(org_id, await _open(org_id, run_id, durable))
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


async def end_run(spec: RunSpec) -> None:
    """The run ended: its session closed and its sandbox prefix deleted, when it may have one (the tool was
    offered, and the run was durable or its files went through the bucket)."""
    run_id = spec.run_id
    await close_run(run_id)
    prefix = _prefix(spec.org_id, run_id)
    offered = any(t.name == "run_python" for t in spec.tools)
    if prefix and offered and (spec.mode == "durable" or getattr(backend(), "files_in_bucket", False)):
        try:
            await asyncio.to_thread(run_files.delete_prefix, prefix)
        except Exception:  # the run has ended; the bucket's lifecycle rule on sandbox/ removes what is left
            log.warning("the run's sandbox files were not deleted", extra={"run_id": str(run_id)}, exc_info=True)


def open_sessions() -> int:
    return len(_sessions)
