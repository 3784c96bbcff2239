"""Flat cost per turn (issue 17): one chat of 200 turns, each an inline run of the scripted model; for turns 1,
50, 100, 150 and 200 it prints the checkpoint bytes the turn stored, what the same checkpoints would have stored
when each held the whole history (the format before chat-prefix checkpoints: measured from the same rows with the
chat's earlier messages put back), the run's time in the server (started -> finished) and POST -> RUN_FINISHED.

Run from the repo root (about 2-4 minutes): `.venv/bin/python bench/turn_cost.py` (`--turns`, `--chunks`).
The embedded Postgres and Valkey and the dev app run in this process (no moto); figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.raw_sse import RawSseClient  # noqa: E402
from bench.relay_process import HOST  # noqa: E402
from bench.scripted_model import MODEL_ID, register  # noqa: E402
from bench.streaming_support import Tenant, local_stack, make_tenant  # noqa: E402


def stored(run_id: str) -> tuple[int, int, int, float]:
    """(checkpoints, bytes stored, bytes with the whole history in each, server seconds) of one run."""
    import psycopg

    with psycopg.connect(os.environ["DATABASE_ADMIN_URL"]) as conn:
        rows = conn.execute(
            "SELECT octet_length(messages::text) AS size, state FROM run_checkpoints WHERE run_id = %s", [run_id]
        ).fetchall()
        full = 0
        for size, state in rows:
            prefix = state.get("chat_prefix")
            prior = 0
            if prefix:
                prior_row = conn.execute(
                    "SELECT coalesce(sum(octet_length(message::text)), 0) + count(*) FROM messages"
                    " WHERE chat_id = %s AND run_id IS DISTINCT FROM %s AND id <= %s",
                    [prefix["chat_id"], run_id, prefix["upto"]],
                ).fetchone()
                prior = int(prior_row[0]) if prior_row else 0
            full += size + prior
        timing = conn.execute(
            "SELECT extract(epoch FROM finished_at - started_at) FROM runs WHERE id = %s", [run_id]
        ).fetchone()
    return len(rows), sum(size for size, _ in rows), full, float(timing[0]) if timing and timing[0] else 0.0


async def chat(server_url: str, port: int, tenant: Tenant, turns: int, chunks: int) -> list[dict[str, Any]]:
    import httpx

    out: list[dict[str, Any]] = []
    async with httpx.AsyncClient(base_url=server_url, headers=tenant.headers, timeout=60) as http:
        made = await http.post("/api/v1/chats", json={"title": "long chat"})
        made.raise_for_status()
        chat_id = made.json()["id"]
        for turn in range(1, turns + 1):
            body = {"message": f"chunks:{chunks} turn {turn}", "model": MODEL_ID, "mode": "inline"}
            t0 = time.perf_counter()
            started = await http.post(f"/api/v1/chats/{chat_id}/runs", json=body)
            started.raise_for_status()
            sse = await RawSseClient.connect(HOST, port, started.json()["events_url"], tenant.headers)
            last = b""
            async for data in sse.frames():
                last = data
            await sse.close()
            wall = time.perf_counter() - t0
            if json.loads(last)["type"] != "RUN_FINISHED":
                raise RuntimeError(f"turn {turn} ended with {last[:200]!r}")
            out.append({"turn": turn, "run_id": started.json()["run_id"], "wall": wall})
            if turn % 25 == 0:
                print(f"- turn {turn}", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--chunks", type=int, default=50, help="reply length of every turn, in chunks")
    args = parser.parse_args()
    taken = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    with tempfile.TemporaryDirectory(prefix="pa-turns-") as tmp, local_stack(Path(tmp)):
        from personal_agent.local.dev_app import create_dev_app
        from tests.live_server import LiveServer

        register()
        tenant = make_tenant()
        server = LiveServer(create_dev_app()).start()
        try:
            turns = asyncio.run(chat(server.url, server.port, tenant, args.turns, args.chunks))
        finally:
            server.stop()
        marks = sorted({1, *range(50, args.turns + 1, 50), args.turns})
        load = os.getloadavg()[0]
        print(f"\nFlat cost per turn, taken {taken}, {args.turns} turns of {args.chunks} chunks, load {load:.1f}")
        print(
            f"  {'turn':>5} {'checkpoints':>11} {'bytes stored':>13} {'whole-history format':>21}"
            f" {'server run ms':>14} {'POST->finished ms':>18}"
        )
        for turn in marks:
            row = turns[turn - 1]
            count, size, full, server_s = stored(row["run_id"])
            server_ms, wall_ms = server_s * 1000, row["wall"] * 1000
            print(f"  {turn:>5} {count:>11} {size:>13,} {full:>21,} {server_ms:>14.1f} {wall_ms:>18.1f}")
        walls = [t["wall"] for t in turns]
        head, tail = walls[: len(walls) // 10], walls[-len(walls) // 10 :]
        print(
            f"  median POST->finished, first tenth {sorted(head)[len(head) // 2] * 1000:.1f} ms,"
            f" last tenth {sorted(tail)[len(tail) // 2] * 1000:.1f} ms"
        )


if __name__ == "__main__":
    main()
