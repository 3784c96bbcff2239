"""The CPU a run's model stream costs in pydantic-ai alone, with no platform code at all (issue 17's floor).

The same scripted 200-chunk reply (`bench/scripted_model.py`) is consumed three ways, in this process:

- `model stream`: the model's own `StreamedResponse`, iterated (what any agent framework must at least pay);
- `agent stream`: `Agent.iter` + `ModelRequestNode.stream`, iterating the `AgentStream` (the engine until issue 17's
  fifth pass);
- `engine way`: the same, read as the engine reads it (`fastpaths/direct_model_events.request_events`: the
  model's stream directly when no capability watches it), with pydantic-ai's stream locks as shipped, then as the
  engine has them (`fastpaths/stream_pull_lock`: no event-loop round trip per pull);
- `event handler`: `Agent.run(event_stream_handler=...)`, pydantic-ai's other way to see every event.

Every row but the last runs pydantic-ai as shipped.

`runs/s per core` is 1000 / the median CPU ms per run: how many runs one Python process could stream if the
platform itself cost nothing. Printed, never asserted:

    .venv/bin/python bench/agent_floor.py [--runs 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import AsyncIterable, Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart  # noqa: E402
from pydantic_ai.models import ModelRequestParameters  # noqa: E402

from bench.scripted_model import CHUNKS, scripted_model  # noqa: E402
from personal_agent.fastpaths import stream_pull_lock  # noqa: E402
from personal_agent.fastpaths.direct_model_events import request_events  # noqa: E402


async def model_stream() -> int:
    events = 0
    request: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("hello")])]
    async with scripted_model().request_stream(request, None, ModelRequestParameters()) as response:
        async for _ in response:
            events += 1
    return events


async def _agent_run(read: Callable[[Any], tuple[AsyncIterable[object], ...]]) -> int:
    """One `Agent.iter` run, each model request's events read from what `read` makes of its `AgentStream`."""
    events = 0
    agent = Agent(scripted_model())
    async with agent.iter("hello") as run:
        node = run.next_node
        while not Agent.is_end_node(node):
            if Agent.is_model_request_node(node):
                async with node.stream(run.ctx) as stream:
                    for iterable in read(stream):
                        async for _ in iterable:
                            events += 1
            node = await run.next(node)
    return events


async def agent_stream() -> int:
    return await _agent_run(lambda stream: (stream,))


async def engine_way() -> int:
    return await _agent_run(request_events)


async def event_handler() -> int:
    events = 0

    async def count(_ctx: object, stream: object) -> None:
        nonlocal events
        async for _ in stream:  # type: ignore[attr-defined]
            events += 1

    await Agent(scripted_model()).run("hello", event_stream_handler=count)
    return events


async def measure(way: Callable[[], Awaitable[int]], runs: int, fast_pulls: bool) -> tuple[float, int]:
    """Median CPU ms per run over `runs` runs (after a warm-up), and the events one run yields."""
    if fast_pulls:
        stream_pull_lock.install()
    else:
        stream_pull_lock.restore()
    events = await way()
    costs = []
    for _ in range(runs):
        start = time.process_time()
        await way()
        costs.append((time.process_time() - start) * 1000)
    return statistics.median(costs), events


async def main(runs: int) -> None:
    print(f"pydantic-ai alone, a {CHUNKS}-chunk scripted reply, {runs} runs each (CPU ms per run, median):")
    base = None
    ways = (
        ("model stream", model_stream, False),
        ("agent stream", agent_stream, False),
        ("event handler", event_handler, False),
        ("engine way, shipped locks", engine_way, False),
        ("engine way", engine_way, True),
    )
    for name, way, fast_pulls in ways:
        ms, events = await measure(way, runs, fast_pulls)
        base = base or ms
        print(f"  {name:<25} {ms:6.2f} ms  {events} events  {ms / base:4.1f}x  ~{1000 / ms:5.0f} runs/s per core")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200)
    asyncio.run(main(parser.parse_args().runs))
