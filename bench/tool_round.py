"""What one tool round costs `pa dev`'s server (issue 35, item 5): SQL statements, Redis commands and Python CPU per
round, from runs of the bench's scripted model in this process (the embedded Postgres and Valkey, the dev app
under uvicorn in a thread, as `bench/turn_cost.py` runs it). Printed, never asserted:

    .venv/bin/python bench/tool_round.py [--runs 10] [--profile out.pstats]

It runs `--runs` plain turns (one model request, a 200-chunk reply) and `--runs` `tools:3` turns (three
`current_time` calls, four model requests, then the same reply), one at a time, counting every statement psycopg
sends (by the calling function in `personal_agent` and the statement's first words) and every Redis command; a tool
round is (tools3 - plain) / 3. `--profile` writes a cProfile of the tools3 runs (the server's thread and this
client's together: the client is a raw socket reader, a small share).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.raw_sse import RawSseClient  # noqa: E402
from bench.relay_process import HOST  # noqa: E402
from bench.scripted_model import MODEL_ID, register  # noqa: E402
from bench.streaming_support import Tenant, local_stack, make_tenant  # noqa: E402

SQL: Counter[str] = Counter()
REDIS: Counter[str] = Counter()
_SPACE = re.compile(r"\s+")


def _caller() -> str:
    """The innermost `personal_agent` function (outside `db/`) on the stack: who sent the statement or command."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if "personal_agent" in name and "/db/" not in name:
            return f"{Path(name).parent.name}/{Path(name).stem}.{frame.f_code.co_name}"
        frame = frame.f_back  # type: ignore[assignment]
    return "?"


def _words(query: Any) -> str:
    text = query if isinstance(query, str) else getattr(query, "as_string", lambda _c: str(query))(None)
    return _SPACE.sub(" ", str(text)).strip()[:70]


def instrument() -> None:
    """Counters around psycopg's async cursor and redis-py's async client."""
    import psycopg
    import redis.asyncio.client as rc

    execute, executemany = psycopg.AsyncCursor.execute, psycopg.AsyncCursor.executemany

    async def counted(self: Any, query: Any, *args: Any, **kw: Any) -> Any:
        SQL[f"{_caller()}: {_words(query)}"] += 1
        return await execute(self, query, *args, **kw)

    async def counted_many(self: Any, query: Any, *args: Any, **kw: Any) -> Any:
        SQL[f"{_caller()}: (many) {_words(query)}"] += 1
        return await executemany(self, query, *args, **kw)

    psycopg.AsyncCursor.execute = counted  # type: ignore[method-assign]
    psycopg.AsyncCursor.executemany = counted_many  # type: ignore[method-assign]
    command: Any = rc.Redis.execute_command
    pipe_execute = rc.Pipeline.execute

    async def counted_command(self: Any, *args: Any, **kw: Any) -> Any:
        REDIS[f"{_caller()}: {args[0]}"] += 1
        return await command(self, *args, **kw)

    async def counted_pipe(self: Any, *args: Any, **kw: Any) -> Any:
        names = "+".join(str(c[0][0]) for c in self.command_stack)
        REDIS[f"{_caller()}: pipeline {names}"] += 1
        return await pipe_execute(self, *args, **kw)

    rc.Redis.execute_command = counted_command  # type: ignore[method-assign]
    rc.Pipeline.execute = counted_pipe  # type: ignore[method-assign]


async def turns(url: str, port: int, tenant: Tenant, message: str, runs: int) -> float:
    """`runs` turns of `message`, each in a new chat (made first, not counted); answers the CPU seconds they took."""
    import httpx

    async with httpx.AsyncClient(base_url=url, headers=tenant.headers, timeout=60) as http:
        chats = [(await http.post("/api/v1/chats", json={"title": "b"})).json()["id"] for _ in range(runs)]
    body = json.dumps({"message": message, "model": MODEL_ID, "mode": "inline"}).encode()
    SQL.clear()
    REDIS.clear()
    cpu0 = time.process_time()
    for chat_id in chats:
        sse = await RawSseClient.connect(HOST, port, f"/api/v1/chats/{chat_id}/runs/stream", tenant.headers, body)
        frames = [data async for data in sse.frames()]
        await sse.close()
        if b'"RUN_FINISHED"' not in frames[-1]:
            raise RuntimeError(f"a run ended with {frames[-1][:200]!r}")
    return time.process_time() - cpu0


def show(title: str, plain: Counter[str], tools: Counter[str], runs: int) -> None:
    print(
        f"\n{title}: per plain run {sum(plain.values()) / runs:.1f}, per tools3 run {sum(tools.values()) / runs:.1f},"
        f" per tool round {(sum(tools.values()) - sum(plain.values())) / runs / 3:.1f}"
    )
    keys = sorted(set(plain) | set(tools), key=lambda k: -(tools[k] - plain[k]))
    for key in keys:
        p, t = plain[key] / runs, tools[key] / runs
        print(f"  {p:6.1f} {t:6.1f} {(t - p) / 3:+6.2f}  {key}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--profile", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pa-round-") as tmp, local_stack(Path(tmp)):
        from personal_agent.local.dev_app import create_dev_app
        from tests.live_server import LiveServer

        register()
        instrument()
        tenant = make_tenant()
        server = LiveServer(create_dev_app()).start()
        try:
            for message in ("hello", "tools:3 warm"):  # first-request imports, the built-in agent
                asyncio.run(turns(server.url, server.port, tenant, message, 2))
            cpu_plain = asyncio.run(turns(server.url, server.port, tenant, "hello", args.runs))
            plain_sql, plain_redis = Counter(SQL), Counter(REDIS)
            profiler = cProfile.Profile() if args.profile else None
            if profiler:
                profiler.enable()
            cpu_tools = asyncio.run(turns(server.url, server.port, tenant, "tools:3 what time is it?", args.runs))
            if profiler:
                profiler.disable()
                profiler.dump_stats(args.profile)
        finally:
            server.stop()
    print(
        f"CPU per plain run {cpu_plain * 1000 / args.runs:.1f} ms, per tools3 run {cpu_tools * 1000 / args.runs:.1f}"
        f" ms, per tool round {(cpu_tools - cpu_plain) * 1000 / args.runs / 3:.1f} ms (this process: server + client)"
    )
    show("SQL statements", plain_sql, SQL, args.runs)
    show("Redis commands", plain_redis, REDIS, args.runs)


if __name__ == "__main__":
    main()
