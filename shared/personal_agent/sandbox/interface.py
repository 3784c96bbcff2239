"""The one interface every sandbox backend implements, and what a call returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class InFile:
    """A file put in the session's scratch directory before the code runs (a plain name, no directories). `key`: its
    object in the run's sandbox prefix of the bucket (`sandbox/run_files.py`) once it is stored there; a file restored
    from a durable run's record has its key and no data."""

    name: str
    data: bytes
    key: str = ""


@dataclass(frozen=True)
class OutFile:
    """A file the call wrote (new or changed in the scratch directory)."""

    name: str
    data: bytes


@dataclass(frozen=True)
class CallResult:
    """What one call returned. `ended` says why the session ended with it (a limit, a crash), None when it goes on."""

    stdout: str = ""
    stderr: str = ""
    value: str | None = None
    error: str | None = None
    files: tuple[OutFile, ...] = ()
    files_left_out: tuple[str, ...] = ()
    seconds: float = 0.0
    """Wall-clock seconds the call held the sandbox (what is metered)."""
    ended: str | None = None
    processes_killed: int = 0


@dataclass(frozen=True)
class Availability:
    ok: bool
    detail: str
    """What isolates the code (ok) or why there is no sandbox here (not ok)."""
    backend: str = "off"
    features: tuple[str, ...] = field(default=())


class Session(Protocol):
    """One run's sandbox: a kernel whose variables and scratch files last until `close`."""

    async def call(self, code: str, files: tuple[InFile, ...] = ()) -> CallResult: ...

    async def close(self) -> None: ...

    @property
    def alive(self) -> bool: ...


@runtime_checkable
class Restorable(Protocol):
    """A session that takes a durable run's record as it is (the AWS backend replays cells on every call anyway);
    any other is restored by replaying the record's cells through `call`."""

    def restore(self, cells: list[str], files: tuple[InFile, ...]) -> None: ...


class Backend(Protocol):
    def availability(self) -> Availability: ...

    async def open(self, org_id: str, prefix: str = "") -> Session:
        """A new session of the org; `prefix`: the run's sandbox prefix in the bucket ("": no bucket here)."""
        ...
