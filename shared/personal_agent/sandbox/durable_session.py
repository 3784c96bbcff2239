"""A durable run's sandbox session, kept with the run rather than in a process: a durable run's steps may each run in
another process (Step Functions invokes a Lambda per Task; after an approval wait the next step is anywhere), so
after every call that succeeded its record (the cells that succeeded, and its input files' keys) is written to the
run's sandbox prefix in the bucket, its input files beside it (`run_files.py`). A later step's first `run_python`
opens a new session and restores it: the AWS backend takes the record as it is (it replays cells on every call
anyway), the local one replays the cells with their output dropped (their seconds are metered with that call).

A cell that failed is not recorded (as on AWS, it is not replayed); a session ended by a limit ends its record too
(its variables are lost, as the model is told). The record goes when the run ends (`sessions.end_run`)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from typing import Any

from personal_agent.sandbox import run_files
from personal_agent.sandbox.interface import CallResult, InFile, Restorable, Session

log = logging.getLogger("personal_agent.sandbox")

RECORD_CELLS = 50
"""Cells a record keeps (the AWS backend replays at most as many)."""


class DurableSession:
    def __init__(self, inner: Session, prefix: str, record: dict[str, Any] | None) -> None:
        self.inner, self.prefix = inner, prefix
        self.cells: list[str] = [str(c) for c in (record or {}).get("cells", [])]
        self.files: dict[str, str] = {str(k): str(v) for k, v in (record or {}).get("files", {}).items()}
        """The session's input files: name -> key in the run's prefix."""
        self.replay_seconds = 0.0

    @property
    def alive(self) -> bool:
        return self.inner.alive

    async def restore(self) -> None:
        """Bring the new session to where the record left it."""
        if not self.cells:
            return
        if isinstance(self.inner, Restorable):
            self.inner.restore(self.cells, tuple(InFile(name, b"", key) for name, key in self.files.items()))
            return
        files = await asyncio.to_thread(self._load)
        started = time.monotonic()
        for index, cell in enumerate(self.cells):
            if (await self.inner.call(cell, files if index == 0 else ())).ended is not None:
                break
        self.replay_seconds = time.monotonic() - started

    def _load(self) -> tuple[InFile, ...]:
        """The record's input files, read back from the bucket (one that is gone is left out)."""
        found = ((name, key, run_files.read(key)) for name, key in self.files.items())
        return tuple(InFile(name, data, key) for name, key, data in found if data is not None)

    def _store(self, files: tuple[InFile, ...]) -> tuple[InFile, ...]:
        """The call's input files, put in the run's prefix (they are the record's)."""
        stored = []
        for file in files:
            if not file.key:
                file = InFile(file.name, file.data, run_files.input_key(self.prefix, file.name))
                run_files.put(file.key, file.data)
            stored.append(file)
        return tuple(stored)

    async def call(self, code: str, files: tuple[InFile, ...] = ()) -> CallResult:
        try:
            stored = await asyncio.to_thread(self._store, files)
        except Exception as exc:  # the bucket (S3's error, no answer): nothing was run
            return CallResult(error=f"the session's files could not be stored with the run: {type(exc).__name__}")
        result = await self.inner.call(code, stored)
        if self.replay_seconds:
            result = dataclasses.replace(result, seconds=result.seconds + self.replay_seconds)
            self.replay_seconds = 0.0
        if result.ended is not None:
            self.cells, self.files = [], {}
        elif result.error is None:
            self.cells = [*self.cells, code][-RECORD_CELLS:]
            self.files.update((f.name, f.key) for f in stored)
        else:
            return result
        record = {"cells": self.cells, "files": self.files}
        try:
            await asyncio.to_thread(run_files.write_record, self.prefix, record)
        except Exception:  # the call stands; a later step restores the record as it was before it
            log.warning("a durable run's sandbox record was not stored", extra={"prefix": self.prefix}, exc_info=True)
        return result

    async def close(self) -> None:
        """The process's kernel closed; the record stays (the run's next step restores it)."""
        await self.inner.close()
