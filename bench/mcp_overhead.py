"""MCP tool-call overhead on loopback, printed (never asserted).

What is measured, at the client level and without a database (the demo MCP server of
`personal_agent.local.demo_mcp` served by uvicorn on 127.0.0.1, in a thread of this process):

- MCP tool call: `call_tool("weather", {"city": "Paris"})` over one open session made by
  `personal_agent.mcp_servers.client.connect` (streamable HTTP, the transport `McpServerToolset` uses); the
  toolset's `call_tool` adds only a dict lookup, a schema-hash compare and text extraction on top.
- First-party function tool: the same weather function run the way pydantic-ai runs a sync function tool
  (`anyio.to_thread.run_sync`), so the difference is the cost of going through MCP.
- Connect per durable step: `connect` + `list_tools` + close, what every engine step (a durable Task) pays per
  MCP server it needs. Not included: unsealing the server's auth headers (one DB read and a KMS/local unseal).

Each figure is the median over RUNS runs of the per-run p50/p95 of CALLS calls (CONNECTS connections).
Usage: `.venv/bin/python bench/mcp_overhead.py [runs] [calls] [connects]`.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `tests.live_server` and `bench.*`

from bench.streaming_support import ms, percentile  # noqa: E402
from personal_agent.local.demo_mcp import WEATHER, demo_mcp_app  # noqa: E402
from personal_agent.mcp_servers.client import connect  # noqa: E402
from tests.live_server import LiveServer  # noqa: E402


def weather(city: str) -> str:
    return f"{city}: {WEATHER.get(city.strip().lower(), 'sunny, 20 °C')}"


async def mcp_calls(url: str, calls: int) -> list[int]:
    samples: list[int] = []
    async with connect(url, {}) as client:
        await client.call_tool("weather", {"city": "Paris"})  # warm
        for _ in range(calls):
            start = time.perf_counter_ns()
            result = await client.call_tool("weather", {"city": "Paris"})
            samples.append(time.perf_counter_ns() - start)
            assert not result.is_error
    return samples


async def local_calls(calls: int) -> list[int]:
    samples: list[int] = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        await anyio.to_thread.run_sync(weather, "Paris")
        samples.append(time.perf_counter_ns() - start)
    return samples


async def connects(url: str, count: int) -> list[int]:
    samples: list[int] = []
    for _ in range(count):
        start = time.perf_counter_ns()
        async with connect(url, {}) as client:
            await client.list_tools()
        samples.append(time.perf_counter_ns() - start)
    return samples


def summary(runs: list[list[int]]) -> str:
    p50 = statistics.median(percentile([float(s) for s in r], 50) for r in runs)
    p95 = statistics.median(percentile([float(s) for s in r], 95) for r in runs)
    return f"p50 {ms(p50):>10}   p95 {ms(p95):>10}"


async def main(runs: int, calls: int, count: int) -> None:
    server = LiveServer(demo_mcp_app()).start()
    url = f"{server.url}/mcp"
    try:
        await connects(url, 3)  # warm the server and the imports
        mcp = [await mcp_calls(url, calls) for _ in range(runs)]
        local = [await local_calls(calls) for _ in range(runs)]
        per_step = [await connects(url, count) for _ in range(runs)]
    finally:
        server.stop()
    print(f"\nMCP overhead on loopback (medians over {runs} runs; {calls} calls, {count} connects per run)")
    print(f"  tool call via MCP (open session)        {summary(mcp)}")
    print(f"  first-party function tool (to_thread)   {summary(local)}")
    print(f"  connect + list_tools + close per step   {summary(per_step)}")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    runs, calls, count = (args + [5, 200, 50][len(args) :])[:3]
    asyncio.run(main(runs, calls, count))
