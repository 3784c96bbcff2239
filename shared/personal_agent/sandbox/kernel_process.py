"""The platform's side of one kernel process (`sandbox/kernel.py`): start it, send a call, read its answer under
the wall-clock limit, kill it. Whatever the code does, the platform reads at most one bounded line per call and
kills the whole process group when the limit passes, the answer is malformed or the kernel dies."""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
import os
import signal
import time
from typing import Any

from personal_agent.sandbox.config import SandboxLimits
from personal_agent.sandbox.interface import CallResult, InFile, OutFile

STARTUP_SECONDS = 30.0
EXIT_SECONDS = 2.0
"""How long a kernel that closed its answers may take to exit before it is killed (its status read either way)."""


class KernelProcess:
    """A live kernel: one call at a time; once it has ended (a limit, a crash, `close`) every call says so."""

    def __init__(self, process: asyncio.subprocess.Process, limits: SandboxLimits) -> None:
        self.process = process
        self.limits = limits
        self.ended: str | None = None
        self.lock = asyncio.Lock()

    @classmethod
    async def start(
        cls, argv: list[str], kernel_args: dict[str, Any], limits: SandboxLimits, pass_fds: tuple[int, ...] = ()
    ) -> KernelProcess:
        # The frame limit: every file and both outputs of one call, base64 and JSON-escaped, with room to spare.
        frame = 4 * (limits.files_bytes + 6 * limits.output_chars) + 2**20
        process = await asyncio.create_subprocess_exec(
            *argv,
            json.dumps(kernel_args),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env={},  # nothing of the platform's environment, not even in bwrap's own /proc/<pid>/environ
            pass_fds=pass_fds,
            start_new_session=True,
            limit=frame,
        )
        kernel = cls(process, limits)
        try:
            ready = await asyncio.wait_for(kernel._read(), STARTUP_SECONDS)
        except (TimeoutError, ValueError) as exc:
            await kernel.kill("the sandbox did not start")
            raise RuntimeError("the sandbox did not start") from exc
        if ready is None or not ready.get("ready"):
            await kernel.kill("the sandbox did not start")
            raise RuntimeError("the sandbox did not start")
        return kernel

    @property
    def alive(self) -> bool:
        return self.ended is None and self.process.returncode is None

    async def _read(self) -> dict[str, Any] | None:
        assert self.process.stdout is not None
        line = await self.process.stdout.readline()  # ValueError past the frame limit
        if not line:
            return None
        decoded = json.loads(line)
        if not isinstance(decoded, dict):
            raise ValueError("not a response")
        return decoded

    async def call(self, code: str, files: tuple[InFile, ...] = ()) -> CallResult:
        async with self.lock:
            if not self.alive:
                return CallResult(error=f"the sandbox session has ended ({self.ended or 'it exited'})", ended="ended")
            request = {
                "code": code,
                "files": [{"name": f.name, "data": base64.b64encode(f.data).decode()} for f in files],
            }
            started = time.monotonic()
            assert self.process.stdin is not None
            try:
                self.process.stdin.write((json.dumps(request) + "\n").encode())
                await self.process.stdin.drain()
                reply = await asyncio.wait_for(self._read(), self.limits.wall_seconds)
            except TimeoutError:
                return await self._ended(
                    started, f"the call ran past its {self.limits.wall_seconds:g} s wall-clock limit"
                )
            except (ValueError, ConnectionError, BrokenPipeError):
                return await self._ended(started, "the sandbox's answer was malformed or too large")
            if reply is None:  # its answers closed: it is dying; its exit status says why (a moment later)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.process.wait(), EXIT_SECONDS)
                return await self._ended(started, self._exit_reason())
            return result_of(reply, time.monotonic() - started)

    def _exit_reason(self) -> str:
        code = self.process.returncode or 0
        signal_number = -code if code < 0 else code - 128 if code > 128 else 0  # bwrap exits 128 + the signal
        if signal_number == signal.SIGXCPU:
            return f"the session used its {self.limits.cpu_seconds} CPU seconds"
        if signal_number:
            return f"the sandbox was killed by signal {signal_number}"
        return "the sandbox exited"

    async def _ended(self, started: float, reason: str) -> CallResult:
        await self.process.wait() if self.process.returncode is not None else await self.kill(reason)
        self.ended = self.ended or reason
        return CallResult(
            error=f"{reason}; the session was ended and its variables and files are lost",
            seconds=time.monotonic() - started,
            ended=reason,
        )

    async def kill(self, reason: str = "closed") -> None:
        """Kill the kernel and everything it started (its process group; the PID namespace dies with its init)."""
        self.ended = self.ended or reason
        if self.process.returncode is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        await self.process.wait()

    async def close(self) -> None:
        await self.kill("closed")


def result_of(reply: dict[str, Any], seconds: float) -> CallResult:
    """A kernel's reply as a call's result (what is malformed in it is dropped)."""
    files = []
    for item in reply.get("files", []):
        try:
            files.append(OutFile(name=str(item["name"]), data=base64.b64decode(item["data"], validate=True)))
        except (KeyError, TypeError, binascii.Error):
            continue
    return CallResult(
        stdout=str(reply.get("stdout", "")),
        stderr=str(reply.get("stderr", "")),
        value=reply.get("value") if isinstance(reply.get("value"), str) else None,
        error=reply.get("error") if isinstance(reply.get("error"), str) else None,
        files=tuple(files),
        files_left_out=tuple(str(n) for n in reply.get("files_left_out", [])),
        seconds=seconds,
        processes_killed=int(reply.get("processes_killed", 0)),
    )
