"""`pa dev` keeps what it started running: a watcher thread polls each part (embedded Postgres, Valkey, moto,
LocalStack) and restarts one that died on the same data dir and port, so the URLs every process holds stay valid
and its data is still there, and the console says so in one line. `<data dir>/pids.json` names the processes that
serve (rewritten on every restart) for a developer, a bench or a test that wants to kill one."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger("personal_agent.local.supervisor")
POLL_SECONDS = 0.2
RETRY_SECONDS = (0.5, 1.0, 2.0, 5.0)  # between failed restarts of one part


@dataclass
class Part:
    """One supervised part: `exited()` says how it ended (None while it runs), `restart()` starts it again on the
    same data and port (raising if it cannot), `pid()` names its process (None for a part served in-process)."""

    name: str
    exited: Callable[[], str | None]
    restart: Callable[[], None]
    pid: Callable[[], int | None] = lambda: None


def exit_text(code: int) -> str:
    """How a process ended, from its exit code (negative: the signal that killed it)."""
    return f"exited (signal {-code})" if code < 0 else f"exited (code {code})"


def popen_exit(process: subprocess.Popen[bytes] | None) -> str | None:
    """None while `process` runs; how it ended otherwise ("stopped" when there is none)."""
    code = None if process is None else process.poll()
    if process is not None and code is None:
        return None
    return "stopped" if code is None else exit_text(code)


def _say(line: str) -> None:
    print(f"pa dev: {line}", flush=True)  # noqa: T201  the console is this part's interface


@dataclass
class Supervisor:
    parts: list[Part]
    pids_path: Path
    extra_pids: dict[str, object] = field(default_factory=dict)  # e.g. the dev server's own and its workers'
    say: Callable[[str], None] = _say
    _stopping: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _failures: dict[str, int] = field(default_factory=dict)
    _next_try: dict[str, float] = field(default_factory=dict)

    def start(self) -> Supervisor:
        self.write_pids()
        self._thread = threading.Thread(target=self._watch, name="pa-dev-supervisor", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching (before the parts are stopped on purpose); a restart under way finishes first."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
        self.pids_path.unlink(missing_ok=True)

    def write_pids(self) -> None:
        pids = {part.name: part.pid() for part in self.parts} | self.extra_pids
        temporary = self.pids_path.with_suffix(".tmp")
        temporary.write_text(json.dumps({k: v for k, v in pids.items() if v is not None}))
        os.replace(temporary, self.pids_path)  # a reader never sees half a file

    def _watch(self) -> None:
        while not self._stopping.wait(POLL_SECONDS):
            for part in self.parts:
                if self._stopping.is_set():
                    return
                try:
                    self.check(part)
                except Exception:  # a watcher that dies would supervise nothing: log and keep watching
                    log.exception("supervising %s failed", part.name)

    def check(self, part: Part) -> None:
        """Restart `part` if it died (and its retry delay, after a failed restart, has passed)."""
        how = part.exited()
        if how is None or time.monotonic() < self._next_try.get(part.name, 0.0):
            return
        pid = part.pid()
        who = f"{part.name} (pid {pid})" if pid else part.name
        started = time.perf_counter()
        try:
            part.restart()
        except Exception as exc:
            failures = self._failures[part.name] = self._failures.get(part.name, 0) + 1
            wait = RETRY_SECONDS[min(failures, len(RETRY_SECONDS)) - 1]
            self._next_try[part.name] = time.monotonic() + wait
            self.say(f"{who} {how}; restart failed ({type(exc).__name__}: {exc}); trying again in {wait:g} s")
            return
        self._failures.pop(part.name, None)
        self._next_try.pop(part.name, None)
        self.write_pids()
        self.say(f"{who} {how}; restarted in {time.perf_counter() - started:.1f} s")
