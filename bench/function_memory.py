"""Peak memory of the functions that run the engine (issue 35, item 3), printed, not asserted: the run worker, the
steps function and the stream function (which drives the runs it streams), each in a fresh process as a Lambda
container is, on a three-tool turn and on a turn of a long chat.

The parent starts the local stack (embedded Postgres and Valkey, moto) and makes the org, user and chats; each
figure is a child process that imports the function's module and runs one turn through its real entry: the run
worker's `handler` on a stored run, the steps `handler` called as the state machine calls it until the run ends,
and the stream function's ASGI app answering `POST /chats/{id}/runs/stream` (launch, drive and relay in one
process). Printed: RSS after importing the module and the process's peak RSS (`VmHWM`), in MB. A Lambda's
MemorySize must hold the peak plus the runtime's own ~30-40 MB, with headroom for what a real model sends (longer
answers, retrieved passages, attachments).

Run from the repo root: `.venv/bin/python bench/function_memory.py [--history-turns 200] [--answer-chunks 400]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FUNCTIONS = ("run_worker", "steps", "stream")
TURN = "tools:3 what time is it?"


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _rss_mb() -> float:
    return _status_mb("VmRSS")


def _peak_mb() -> float:
    """This process's high-water RSS (`VmHWM`: `ru_maxrss` would carry the parent's from before the exec)."""
    return _status_mb("VmHWM")


class _Context:
    aws_request_id = "bench-memory"
    function_name = "bench"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:000000000000:function:bench"

    def get_remaining_time_in_millis(self) -> int:
        return 900_000


async def _stored(org_id: str, user_id: str, chat_id: str, mode: str) -> str:
    """A run stored as the API function stores it, not started (its driver is the function measured)."""
    from personal_agent.lifecycle import launch

    async def no_driver(spec: Any, leased: Any = None) -> None:
        return None

    launch.start_run = no_driver  # type: ignore[assignment]
    request = launch.LaunchRequest(
        org_id=uuid.UUID(org_id),
        user_id=uuid.UUID(user_id),
        chat_id=uuid.UUID(chat_id),
        message=TURN,
        model="bench:scripted",
        mode=mode,  # type: ignore[arg-type]
    )
    return str((await launch.launch_run(request)).run_id)


def child(function: str, org_id: str, user_id: str, chat_id: str, token: str) -> dict[str, float]:
    """One turn through `function`'s entry in this (fresh) process."""
    from bench.scripted_model import register

    if function == "run_worker":
        from functions.run_worker.app import handler as worker
        from personal_agent.runtime import run_sync

        imported = _rss_mb()
        register()
        run_id = run_sync(_stored(org_id, user_id, chat_id, "inline"))
        status = worker({"run_id": run_id, "org_id": org_id}, _Context())["status"]
    elif function == "steps":
        from functions.steps.app import handler as step
        from personal_agent.runtime import run_sync

        imported = _rss_mb()
        register()
        run_id = run_sync(_stored(org_id, user_id, chat_id, "durable"))
        status = "continue"
        while status == "continue":
            status = step({"action": "advance", "run_id": run_id, "org_id": org_id}, _Context())["status"]
    else:
        from functions.stream.app import app

        imported = _rss_mb()
        register()
        status = asyncio.run(_streamed(app, chat_id, token))
    if status != "succeeded":
        raise RuntimeError(f"{function}: the turn ended {status}")
    return {"imported_mb": imported, "peak_mb": _peak_mb()}


async def _streamed(app: Any, chat_id: str, token: str) -> str:
    import httpx

    transport = httpx.ASGITransport(app=app)
    headers = {"Authorization": f"Bearer {token}"}
    body = {"message": TURN, "model": "bench:scripted", "mode": "inline"}
    async with httpx.AsyncClient(transport=transport, base_url="http://stream", timeout=120) as http:
        response = await http.post(f"/api/v1/chats/{chat_id}/runs/stream", json=body, headers=headers)
    last = [line for line in response.text.splitlines() if line.startswith("data:")][-1]
    return "succeeded" if '"RUN_FINISHED"' in last else last


async def _tenant(history_turns: int, answer_chunks: int) -> dict[str, str]:
    """An org, a user, a new chat and a long one (`history_turns` earlier turns of `answer_chunks`-word answers)."""
    import psycopg

    from personal_agent.chats.store import insert_chat
    from personal_agent.db import org_transaction
    from personal_agent.identity.dev_issuer import DevIssuer
    from personal_agent.lifecycle import launch, local_drives
    from personal_agent.settings import get_settings

    subject = f"bench-{uuid.uuid4().hex[:8]}"
    issuer = get_settings().dev_issuer
    with psycopg.connect(os.environ["DATABASE_ADMIN_URL"], autocommit=True) as conn:
        org = conn.execute("INSERT INTO orgs (slug, name) VALUES (%s, %s) RETURNING id", [subject, subject]).fetchone()
        user = conn.execute(
            "INSERT INTO users (issuer, subject, email) VALUES (%s, %s, %s) RETURNING id",
            [issuer, subject, f"{subject}@example.test"],
        ).fetchone()
        assert org and user
        conn.execute(
            "INSERT INTO memberships (org_id, user_id, roles) VALUES (%s, %s, %s)", [org[0], user[0], ["user"]]
        )
    chats = {}
    async with org_transaction(org[0]) as conn:
        for name in ("short", "long"):
            chats[name] = str((await insert_chat(conn, org[0], user[0], name)).id)
    from bench.scripted_model import register

    register()
    for i in range(history_turns):
        request = launch.LaunchRequest(
            org_id=org[0],
            user_id=user[0],
            chat_id=uuid.UUID(chats["long"]),
            message=f"chunks:{answer_chunks} tell me more, part {i}",
            model="bench:scripted",
            mode="inline",
        )
        await launch.launch_run(request)
        await local_drives.wait_for_local_runs()
    token = DevIssuer.from_settings(get_settings()).mint(
        subject=subject, orgs=[subject], roles=["user"], ttl_seconds=7200, email=None
    )
    return {"org_id": str(org[0]), "user_id": str(user[0]), **chats, "token": token}


def measure(function: str, tenant: dict[str, str], chat: str) -> dict[str, float]:
    args = [function, tenant["org_id"], tenant["user_id"], tenant[chat], tenant["token"]]
    code = (
        f"import sys, json; sys.path.insert(0, {str(ROOT)!r}); from bench.function_memory import child;"
        f" print(json.dumps(child(*{args!r})))"
    )
    env = {**os.environ, "PA_INLINE_DRIVER": "worker"}  # as on AWS: the function measured drives the run
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT / "docs", capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{function} on the {chat} chat failed:\n{done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--history-turns", type=int, default=200, help="earlier turns of the long chat")
    parser.add_argument("--answer-chunks", type=int, default=400, help="words per earlier answer")
    parser.add_argument("--repeat", type=int, default=2, help="processes per figure (the larger peak is printed)")
    args = parser.parse_args()
    from personal_agent.local.isolation import isolate_process
    from personal_agent.local.stack import LocalStack
    from personal_agent.settings import Settings

    with tempfile.TemporaryDirectory(prefix="pa-bench-memory-") as tmp:
        isolate_process(Path(tmp), PA_ENV="test", PA_DEMO_DELAY_MS="0")
        stack = LocalStack(Settings()).start()
        try:
            tenant = asyncio.run(_tenant(args.history_turns, args.answer_chunks))
            figures = {}
            for function in FUNCTIONS:
                for chat in ("short", "long"):
                    runs = [measure(function, tenant, chat) for _ in range(args.repeat)]
                    figures[(function, chat)] = max(runs, key=lambda r: r["peak_mb"])
        finally:
            stack.stop()
    history = f"{args.history_turns} earlier turns of {args.answer_chunks}-word answers"
    print(f"\nPeak memory per function, one 3-tool turn (scripted model), fresh process each; long chat: {history}")
    for (function, chat), f in figures.items():
        print(
            f"  {function:<10} {chat:<5} chat: after import {f['imported_mb']:6.1f} MB, peak RSS {f['peak_mb']:6.1f} MB"
        )
    print(json.dumps({f"{fn}_{chat}_peak_mb": round(f["peak_mb"], 1) for (fn, chat), f in figures.items()}))


if __name__ == "__main__":
    main()
