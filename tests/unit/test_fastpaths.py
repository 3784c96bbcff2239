"""Each fast path (`personal_agent.fastpaths`) is still in effect: an upgrade of pydantic-ai, FastAPI or Starlette
that moves what a fast path patches leaves it off without breaking anything, so these check the patched
behaviour itself (the patched function installed, the lock that does not yield, the skipped path taken, the
router not imported), not only that requests and runs still work."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
from pydantic_ai import Agent
from pydantic_ai._utils import PeekableAsyncStream
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from personal_agent.engine import drive
from personal_agent.engine.user_context import run_capabilities
from personal_agent.fastpaths import direct_model_events, fastapi_v1_probe, stream_pull_lock

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str, env: dict[str, str] | None = None) -> Any:
    """The JSON the last line of a fresh interpreter running `code` prints."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{ROOT}:{ROOT / 'shared'}", **(env or {})},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


async def _numbers(n: int) -> AsyncIterator[int]:
    for i in range(n):
        yield i


def test_stream_pull_lock_every_new_pydantic_ai_stream_pulls_under_a_fast_acquire_lock() -> None:
    assert drive.request_events  # the engine installs it on import
    assert stream_pull_lock.installed()
    lock = PeekableAsyncStream(_numbers(1))._source_lock  # the attribute the patch relies on
    assert isinstance(lock, anyio.Lock)
    assert lock._fast_acquire is True


async def _reply(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    for chunk in ("fast ", "path"):
        yield chunk


async def test_direct_model_events_a_run_with_the_engines_capabilities_reads_the_models_stream() -> None:
    agent: Agent[None, str] = Agent(FunctionModel(stream_function=_reply), capabilities=run_capabilities())
    read: list[tuple[Any, ...]] = []
    async with agent.iter("question") as run:
        node = run.next_node
        while not Agent.is_end_node(node):
            if Agent.is_model_request_node(node):
                async with node.stream(run.ctx) as stream:
                    iterables = direct_model_events.request_events(stream)
                    read.append((iterables[0] is stream._raw_stream_response, len(iterables)))
                    for events in iterables:
                        async for _ in events:
                            pass
            node = await run.next(node)
    assert read == [(True, 2)]  # the model's own stream first: pydantic-ai's per-chunk capability chain skipped


def test_fastapi_v1_probe_is_installed_where_fastapi_reads_it() -> None:
    from fastapi import encoders
    from fastapi._compat import shared

    import personal_agent.api  # noqa: F401  (installs it)

    assert fastapi_v1_probe.installed()
    assert shared.annotation_is_pydantic_v1.__globals__["is_pydantic_v1_model_class"] is (
        fastapi_v1_probe.is_v1_model_class
    )
    assert encoders.jsonable_encoder.__globals__["is_pydantic_v1_model_instance"] is (
        fastapi_v1_probe.is_v1_model_instance
    )


_BUILD_EVERY_ROUTE = (
    "import json, sys; {prelude}; from personal_agent.api.app import create_app; app = create_app(); "
    "app.openapi(); from fastapi.encoders import jsonable_encoder; jsonable_encoder({{'a': [1]}}); "
    "print(json.dumps('pydantic.v1' in sys.modules))"
)


def test_fastapi_v1_probe_registering_every_route_never_imports_pydantic_v1() -> None:
    assert _python(_BUILD_EVERY_ROUTE.format(prelude="pass")) is False
    # The control: FastAPI's own probes import it with the first route.
    off = "from personal_agent.fastpaths import fastapi_v1_probe; fastapi_v1_probe.install = lambda: None"
    assert _python(_BUILD_EVERY_ROUTE.format(prelude=off)) is True


def test_lazy_routers_a_request_imports_only_the_routers_its_path_needs() -> None:
    code = """
import asyncio, json, sys
import httpx
from personal_agent.api.app import create_app

app = create_app(lazy_routers=True)
before = "personal_agent.api.knowledge" in sys.modules

async def main() -> int:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as http:
        return (await http.get("/api/v1/knowledge/documents")).status_code

status = asyncio.run(main())
others = [m for m in ("chats", "runs", "workflows") if "personal_agent.api." + m in sys.modules]
print(json.dumps([before, status, "personal_agent.api.knowledge" in sys.modules, others]))
"""
    before, status, knowledge, others = _python(code)
    assert (before, status, knowledge, others) == (False, 401, True, [])
