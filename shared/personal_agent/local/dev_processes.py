"""`pa dev`'s extra server processes: forked before the local stack starts, serving the same listening socket.

One Python process streams runs on one core (issue 17: pydantic-ai's own stream and the platform's per-run work
are CPU-bound), so `pa dev` can serve with `PA_DEV_PROCESSES` processes (one by default, as the design has it; `0`:
one per CPU). The kernel hands each new connection to one of them; everything they share lives in Postgres and
Redis (runs, leases, cancel flags, stream slots, the auth cache's revocation counter), and each keeps its own
pools, its SSE fan-out and its inline runs, as separate Lambda instances do.

How a worker lives:
- it is forked while the parent has no thread yet (before the stack starts), so it inherits the listening socket,
  the imported modules and whatever the entry point registered (a model, a tool), and nothing half-locked;
- it waits for the stack's env (database, Redis, AWS endpoint) on a pipe, builds the dev app without the
  scheduler and the recovery sweep (the parent runs those once), serves, and reports ready on a second pipe;
- Ctrl-C reaches every process of the terminal's group; the parent also stops its workers (SIGTERM, a graceful
  shutdown that releases their runs' leases) before it stops the stack;
- a worker whose parent is gone (the env pipe's end) exits at once, as a killed `pa dev` would: the runs it drove
  are resumed by the recovery sweep of the next start (their lease names a process that no longer exists).
"""

from __future__ import annotations

import json
import logging
import os
import select
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger("personal_agent.local.dev")
STOP_SECONDS = 30.0


def process_count(configured: int) -> int:
    """How many processes serve: `configured`, or (0) one per CPU; one where the platform cannot fork."""
    if not hasattr(os, "fork"):
        return 1
    return configured if configured > 0 else os.cpu_count() or 1


@dataclass
class _Worker:
    pid: int
    env_w: int  # the parent's end of the env pipe; open for as long as the parent lives
    ready_r: int


@dataclass
class DevWorkers:
    """The forked workers, from the parent's side."""

    workers: list[_Worker] = field(default_factory=list)

    @classmethod
    def fork(cls, count: int, serve: Callable[[Callable[[], None]], None]) -> DevWorkers:
        """Fork `count` workers; each runs `serve(report_ready)` once `start` sent it the env, then exits. Returns
        in the parent only."""
        started = cls()
        if count and threading.active_count() > 1:  # a fork would copy another thread's locks mid-use
            log.warning("pa dev serves from one process: a thread runs already, so no worker is forked")
            return started
        pipes = [(os.pipe(), os.pipe()) for _ in range(count)]
        for i, ((env_r, env_w), (ready_r, ready_w)) in enumerate(pipes):
            pid = os.fork()
            if pid == 0:  # the worker: never returns into the parent's code
                code = 1
                try:
                    for j, ((o_env_r, o_env_w), (o_ready_r, o_ready_w)) in enumerate(pipes):
                        os.close(o_env_w)
                        os.close(o_ready_r)
                        if j != i:
                            os.close(o_env_r)
                            os.close(o_ready_w)
                    _run_worker(env_r, ready_w, serve)
                    code = 0
                except KeyboardInterrupt:  # Ctrl-C before the stack was up
                    code = 0
                except BaseException:
                    traceback.print_exc()
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(code)
            os.close(env_r)
            os.close(ready_w)
            started.workers.append(_Worker(pid, env_w, ready_r))
        return started

    def start(self, env: dict[str, str]) -> None:
        """Send every worker the stack's env: they build their apps and start serving."""
        message = (json.dumps(env) + "\n").encode()
        for worker in self.workers:
            os.write(worker.env_w, message)

    def wait_ready(self, timeout: float = 60.0) -> int:
        """Wait until every worker serves (or exited, or `timeout` passed); return how many serve."""
        pending = {w.ready_r for w in self.workers}
        ready = 0
        deadline = time.monotonic() + timeout
        while pending and (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select(list(pending), [], [], left)
            for fd in readable:
                ready += os.read(fd, 1) == b"r"
                pending.discard(fd)
        return ready

    def stop(self) -> None:
        """Stop every worker gracefully (SIGTERM), waiting up to `STOP_SECONDS` for each; kill what is left."""
        for worker in self.workers:
            _signal(worker.pid, signal.SIGTERM)
        reapers = [threading.Thread(target=_reap, args=(w.pid,), daemon=True) for w in self.workers]
        for reaper in reapers:
            reaper.start()
        deadline = time.monotonic() + STOP_SECONDS
        for worker, reaper in zip(self.workers, reapers, strict=True):
            reaper.join(max(0.0, deadline - time.monotonic()))
            if reaper.is_alive():
                _signal(worker.pid, signal.SIGKILL)
                reaper.join()
        for worker in self.workers:
            os.close(worker.env_w)
            os.close(worker.ready_r)
        self.workers.clear()


def _signal(pid: int, sig: signal.Signals) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _read_line(fd: int) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 65536)
        if not chunk:
            return b""
        data += chunk
    return data


def _run_worker(env_r: int, ready_w: int, serve: Callable[[Callable[[], None]], None]) -> None:
    line = _read_line(env_r)
    if not line:  # the parent stopped before the stack started
        return
    os.environ.update(json.loads(line))
    threading.Thread(target=_exit_with_parent, args=(env_r,), name="pa-dev-parent", daemon=True).start()

    def report_ready() -> None:
        os.write(ready_w, b"r")

    serve(report_ready)


def _exit_with_parent(env_r: int) -> None:
    """Block on the env pipe: its end means the parent is gone (killed), and so is this worker."""
    while os.read(env_r, 65536):
        pass
    os._exit(0)


def listening_socket(host: str, port: int) -> socket.socket:
    """The dev server's listening socket, bound before any process serves it (each serving process listens on
    it; the workers inherit it)."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = found[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(address)
    sock.set_inheritable(True)
    return sock
