"""The lease an inline run's driver holds: taken once (so two workers never drive one run), renewed by a
heartbeat while the engine advances, released when the drive ends. A worker that dies stops renewing it;
`lifecycle/recovery.py` finds the run by its expired lease (or, on this host, by its holder's missing process)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.db.retry import retrying
from personal_agent.runs import store

log = logging.getLogger("personal_agent.runs")
T = TypeVar("T")


@dataclass(frozen=True)
class Leased:
    """A run stored already leased to the driver that will drive it in this process (`store.insert_run` with a
    `lease_owner`): its first drive starts from `row` instead of taking the lease in a transaction of its own."""

    owner: str
    row: store.RunRow


class LeaseLost(Exception):
    """Another worker took the run over (this one stopped renewing in time): this one stops driving it."""


def host_prefix() -> str:
    """The start of every lease owner this host's processes write."""
    return f"{socket.gethostname()}:"


def local_owner() -> str:
    """A lease owner for one drive in this process: host, process id, and a unique suffix."""
    return f"{host_prefix()}{os.getpid()}:{uuid.uuid4().hex[:8]}"


def owner_is_gone(owner: str | None) -> bool:
    """True for a lease held by a process of this host that no longer exists (it cannot renew it)."""
    if not owner or not owner.startswith(host_prefix()):
        return False
    pid = owner.removeprefix(host_prefix()).split(":", 1)[0]
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # a process of another user has that id now
    return False


class RunLease:
    """One driver's hold on one run."""

    def __init__(self, run_id: UUID, org_id: UUID, owner: str, seconds: float) -> None:
        self.run_id = run_id
        self.org_id = org_id
        self.owner = owner
        self.seconds = seconds
        self.lost = False

    async def take(self) -> store.RunRow | None:
        """Take the run if no live lease is on it: its row as taken (`attempts`: how many drives in a row it has
        had, this one included), or None."""
        async with org_transaction(self.org_id) as conn:
            return await store.take_lease(conn, self.run_id, self.owner, self.seconds)

    async def hold(self, work: Coroutine[Any, Any, T]) -> T:
        """Run `work` while a heartbeat renews the lease; raise `LeaseLost` if another worker took the run."""
        task = asyncio.ensure_future(work)
        beat = asyncio.create_task(self._beat(task), name=f"lease-{self.run_id}")
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self.lost and not (current is not None and current.cancelling()):
                raise LeaseLost(f"run {self.run_id} was taken over by another worker") from None
            raise
        finally:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat

    async def release(self, *, paused: bool = False) -> None:
        """End the drive in order (the run ended, waits for a person, was `paused` by an outage, or this process
        stops): anyone may take it. Tried again while the database is unavailable (`PA_DEPENDENCY_RETRY_SECONDS`),
        so a run paused by a short outage is free again (its count of lost drives reset) once it is back."""

        async def release() -> None:
            async with org_transaction(self.org_id) as conn:
                await store.release_lease(conn, self.run_id, self.owner, paused=paused)

        try:
            await retrying(release, what="a run's lease release")
        except Exception:
            # The lease then expires by itself and recovery resumes the run.
            log.warning("could not release a run's lease", exc_info=True, extra={"run_id": str(self.run_id)})

    async def _beat(self, work: asyncio.Future[Any]) -> None:
        wait = self.seconds / 3
        while not work.done():
            await asyncio.sleep(wait)
            try:
                async with org_transaction(self.org_id) as conn:
                    held = await store.renew_lease(conn, self.run_id, self.owner, self.seconds)
            except Exception as exc:
                # While the database is away the drive waits for it too: renew as soon as it is back, before the
                # recovery sweep takes the expired lease for a dead worker's.
                run = {"run_id": str(self.run_id)}
                log.warning("could not renew a run's lease (%s)", type(exc).__name__, extra=run)
                wait = min(1.0, self.seconds / 3)
                continue
            wait = self.seconds / 3
            if not held:
                self.lost = True
                work.cancel()
                return
