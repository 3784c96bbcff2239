"""Chaos on `pa dev` (issue 41), printed, not asserted: kill Valkey, Postgres, the relay process or the worker at a
random point of an inline or a durable run, N trials each, on loopback, and print what a client saw: runs
completed, events lost, events duplicated, time to recover, client errors by status.

    .venv/bin/python bench/chaos.py                      # 2 trials of each kill, inline and durable
    .venv/bin/python bench/chaos.py --trials 5 --kinds valkey,postgres --modes inline
    .venv/bin/python bench/chaos.py --tree /tmp/before   # `pa dev` from another checkout (PYTHONPATH=<tree>/shared)

Every trial starts its own `pa dev` with two processes (`PA_DEV_PROCESSES=2`, a fresh data dir) and a paced demo
model (`PA_DEMO_DELAY_MS`). "relay": the forked process holding the client's event stream is killed while the
parent drives the run; "worker": the forked process driving an inline run (or that took a durable run's POST) is
killed while the parent holds the stream. The client follows the run as an EventSource does: on a dropped or refused
stream it connects again with the last id it saw. "lost" counts the events a fresh reader of the whole stream gets
after the run that the client never got; "time to recover" runs from the kill to the client's next event.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from personal_agent.local.ports import free_port  # noqa: E402
from tests.sse import Frame, parse_frames  # noqa: E402

MESSAGE = "please echo " + " ".join(f"w{i}" for i in range(30))
TERMINAL = ("RUN_FINISHED", "RUN_ERROR")
REQUEST_TIMEOUT = 20.0


@dataclass
class Follower:
    """A run's events read on a thread through `client`, reconnecting with Last-Event-ID until a terminal event."""

    client: httpx.Client
    url: str
    frames: list[tuple[float, Frame]] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    done: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> Follower:
        threading.Thread(target=self._follow, daemon=True).start()
        return self

    def count(self, kind: str) -> int:
        return sum(f.type == kind for _, f in list(self.frames))

    def _follow(self) -> None:
        while not self.stop.is_set() and not self.done.is_set():
            headers = {"Last-Event-ID": str(self.frames[-1][1].id)} if self.frames and self.frames[-1][1].id else {}
            wait = 0.2
            try:
                with self.client.stream("GET", self.url, headers=headers) as response:
                    if response.status_code != 200:
                        self.errors[str(response.status_code)] += 1
                        response.read()
                        wait = float(response.headers.get("Retry-After", wait))
                    else:
                        self._read(response)
            except httpx.HTTPError as exc:
                self.errors[type(exc).__name__] += 1
            if not self.done.is_set():
                self.stop.wait(min(wait, 5.0))

    def _read(self, response: httpx.Response) -> None:
        pending: list[str] = []
        for line in response.iter_lines():
            if line.startswith(":"):
                continue
            pending.append(line)
            if line == "":
                frames, pending = parse_frames(pending)
                for frame in frames:
                    self.frames.append((time.monotonic(), frame))
                    if frame.type in TERMINAL or _expired(frame):
                        self.done.set()
                        return


def _expired(frame: Frame) -> bool:
    return frame.type == "CUSTOM" and frame.data.get("name") == "resume_expired"


class DevProcess:
    """`pa dev` (from `tree`) with two processes, a fresh data dir and free ports."""

    def __init__(self, tree: Path, delay_ms: int) -> None:
        self.data_dir = Path(tempfile.mkdtemp(prefix="pa-chaos-")) / "data"
        self.port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PA_", "DATABASE_", "REDIS_", "AWS_ENDPOINT"))}
        env.update(
            PYTHONPATH=os.pathsep.join([str(tree / "shared"), str(tree)]),
            PA_DATA_DIR=str(self.data_dir),
            PA_PORT=str(self.port),
            PA_MOTO_PORT=str(free_port()),
            PA_VALKEY_PORT=str(free_port()),
            PA_DEV_PROCESSES="2",
            PA_DEMO_DELAY_MS=str(delay_ms),
        )
        self.env, self.tree = env, tree
        self.url = f"http://127.0.0.1:{self.port}"
        cli = [sys.executable, "-m", "personal_agent.cli"]
        self.proc = subprocess.Popen(
            [*cli, "dev"], cwd=tree, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if "running at" in line:
                break
        else:
            raise RuntimeError(f"pa dev exited with {self.proc.wait()}")
        self.console: list[str] = []
        threading.Thread(target=lambda: self.console.extend(self.proc.stdout or ()), daemon=True).start()
        token = subprocess.run(
            [*cli, "token", "--org", "chaos", "--user", "alice"], cwd=tree, env=env, capture_output=True, text=True
        ).stdout.strip()
        self.auth = {"Authorization": f"Bearer {token.splitlines()[-1]}"}
        children = psutil.Process(self.proc.pid).children()
        self.worker = next(c.pid for c in children if c.cmdline() == psutil.Process(self.proc.pid).cmdline())
        self.valkey = next(c.pid for c in children if "valkey" in c.name())

    def postgres(self) -> int:
        return int((self.data_dir / "pgdata" / "postmaster.pid").read_text().split()[0])

    def client(self, served_by: int | None = None) -> httpx.Client:
        """A client whose one keep-alive connection is served by `served_by` (any process when None)."""
        for _ in range(60):
            client = httpx.Client(
                base_url=self.url,
                headers=self.auth,
                timeout=httpx.Timeout(REQUEST_TIMEOUT),
                limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            )
            before = _own_ports(self.port)
            client.get("/api/v1/me")
            (local,) = (_own_ports(self.port) - before) or {0}
            if served_by is None or _server_of(local, self.port, [self.proc.pid, self.worker]) == served_by:
                return client
            client.close()
        raise RuntimeError(f"no connection landed on pid {served_by}")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for process in psutil.process_iter(["cmdline"]):  # what a stuck or killed dev server left running
            if str(self.data_dir) in " ".join(process.info["cmdline"] or ()):
                process.kill()


def _own_ports(port: int) -> set[int]:
    return {
        c.laddr.port
        for c in psutil.Process().net_connections(kind="tcp")
        if c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED
    }


def _server_of(local_port: int, port: int, pids: list[int]) -> int | None:
    for pid in pids:
        for c in psutil.Process(pid).net_connections(kind="tcp"):
            if c.laddr and c.laddr.port == port and c.raddr and c.raddr.port == local_port:
                return pid
    return None


def _answered(dev: DevProcess, chat_id: str, run_id: str) -> Counter[str]:
    """What the API answers right after the kill: statuses of a read, a transcript and a write."""
    statuses: Counter[str] = Counter()
    with httpx.Client(base_url=dev.url, headers=dev.auth, timeout=REQUEST_TIMEOUT) as http:
        for method, path, body in (
            ("GET", f"/api/v1/runs/{run_id}", None),
            ("GET", f"/api/v1/chats/{chat_id}/messages", None),
            ("POST", "/api/v1/chats", {"title": "during"}),
        ):
            try:
                statuses[str(http.request(method, path, json=body).status_code)] += 1
            except httpx.HTTPError as exc:
                statuses[type(exc).__name__] += 1
    return statuses


def trial(tree: Path, kind: str, mode: str, rng: random.Random, delay_ms: int, seconds: float) -> dict[str, Any]:
    dev = DevProcess(tree, delay_ms)
    try:
        poster = dev.client(dev.worker if kind == "worker" else dev.proc.pid)
        reader = dev.client(dev.worker if kind == "relay" else dev.proc.pid)
        chat_id = poster.post("/api/v1/chats", json={"title": "chaos"}).json()["id"]
        started = poster.post(f"/api/v1/chats/{chat_id}/runs", json={"message": MESSAGE, "mode": mode}).json()
        follower = Follower(reader, started["events_url"]).start()
        at = rng.randint(1, 40)
        deadline = time.monotonic() + 60
        while follower.count("TEXT_MESSAGE_CONTENT") < at and not follower.done.is_set():
            if time.monotonic() > deadline:
                break
            time.sleep(0.02)
        target = {"valkey": dev.valkey, "postgres": dev.postgres(), "relay": dev.worker, "worker": dev.worker}[kind]
        os.kill(target, signal.SIGKILL)
        killed, seen = time.monotonic(), len(follower.frames)
        errors = _answered(dev, chat_id, started["run_id"])
        follower.done.wait(seconds)
        follower.stop.set()
        errors += follower.errors
        after = [t for t, _ in follower.frames[seen:]]
        result: dict[str, Any] = {"recover": (after[0] - killed) if after else None, "errors": errors}
        result |= _outcome(dev, chat_id, started["run_id"], [f for _, f in follower.frames], errors)
        return result
    finally:
        dev.stop()


def _outcome(dev: DevProcess, chat_id: str, run_id: str, frames: list[Frame], errors: Counter[str]) -> dict[str, Any]:
    """Whether the run succeeded, and what the client lost or got twice against a fresh read of the whole stream."""
    ids = [f.id for f in frames]
    duplicated = len(ids) - len(set(ids))
    with httpx.Client(base_url=dev.url, headers=dev.auth, timeout=REQUEST_TIMEOUT) as http:
        status = "?"
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                answer = http.get(f"/api/v1/runs/{run_id}")
            except httpx.HTTPError as exc:
                errors[type(exc).__name__] += 1
                break
            if answer.status_code != 200:
                errors[str(answer.status_code)] += 1
                break
            if (status := answer.json()["status"]) not in ("queued", "running"):
                break
            time.sleep(0.2)
        if frames and _expired(frames[-1]):
            text = http.get(f"/api/v1/chats/{chat_id}/messages").json()["items"][-1].get("text", "")
            return {"status": status, "lost": 0 if "w29" in text else None, "duplicated": duplicated}
        try:
            replay = http.get(f"/api/v1/runs/{run_id}/events", timeout=REQUEST_TIMEOUT)
        except httpx.HTTPError:
            return {"status": status, "lost": None, "duplicated": duplicated}
    if replay.status_code != 200 or status in ("queued", "running", "?"):
        return {"status": status, "lost": None, "duplicated": duplicated}
    fresh, _ = parse_frames(replay.text.splitlines())
    return {"status": status, "lost": len({f.id for f in fresh} - set(ids)), "duplicated": duplicated}


def report(kind: str, mode: str, results: list[dict[str, Any]]) -> str:
    completed = sum(r["status"] == "succeeded" for r in results)
    lost = [r["lost"] for r in results]
    recover = [r["recover"] for r in results if r["recover"] is not None]
    errors: Counter[str] = sum((r["errors"] for r in results), Counter())
    errors = Counter({k: v for k, v in errors.items() if not k.startswith("2")})  # answers that were not errors
    shown_lost = sum(x for x in lost if x is not None)
    unknown = sum(x is None for x in lost)
    return (
        f"| {kind} | {mode} | {completed}/{len(results)} | {shown_lost}{f' (+{unknown} unknown)' if unknown else ''}"
        f" | {sum(r['duplicated'] for r in results)}"
        f" | {f'{statistics.median(recover):.1f} / {max(recover):.1f} s' if recover else 'never'}"
        f"{f' ({len(recover)} of {len(results)})' if recover and len(recover) < len(results) else ''}"
        f" | {', '.join(f'{k}: {v}' for k, v in sorted(errors.items())) or 'none'} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--kinds", default="valkey,postgres,relay,worker")
    parser.add_argument("--modes", default="inline,durable")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose `pa dev` runs")
    parser.add_argument("--delay-ms", type=int, default=60, help="the demo model's pause before each word")
    parser.add_argument("--seconds", type=float, default=60, help="how long a trial waits for the run's end")
    parser.add_argument("--seed", type=int, default=41)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(f"chaos on {args.tree.resolve()}: {args.trials} trial(s) each, demo delay {args.delay_ms} ms")
    print("| kill | run | completed | events lost | duplicated | recover (median / max) | client errors |")
    print("|---|---|---|---|---|---|---|")
    for kind in args.kinds.split(","):
        for mode in args.modes.split(","):
            results = []
            for _ in range(args.trials):
                try:
                    results.append(trial(args.tree.resolve(), kind, mode, rng, args.delay_ms, args.seconds))
                except Exception as exc:  # a trial the harness could not run is a finding too
                    print(f"  ({kind}/{mode}: trial failed: {type(exc).__name__}: {exc})", flush=True)
                    errors = Counter({type(exc).__name__: 1})
                    results.append({"status": "?", "lost": None, "duplicated": 0, "recover": None, "errors": errors})
            print(report(kind, mode, results), flush=True)
    print(json.dumps({"trials": args.trials, "seed": args.seed}))


if __name__ == "__main__":
    main()
