"""One prompt as a normal, metered run through the launch chokepoint (trigger `eval`), in a chat of its own, and
what came of it: the answer's text, the run's cost (its sub-agents included) and latency."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from uuid import UUID

from personal_agent.chats import message_store
from personal_agent.chats import store as chat_store
from personal_agent.db import org_transaction
from personal_agent.errors import AppError
from personal_agent.lifecycle.launch import LaunchRequest, launch_run
from personal_agent.runs import store

CASE_TIMEOUT_SECONDS = 300.0


@dataclass(frozen=True)
class Target:
    """What a prompt runs with: an agent (`slug` or `slug@version`), a model, instructions of its own."""

    agent: str | None = None
    model: str | None = None
    instructions: str | None = None
    tools: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Outcome:
    run_id: UUID | None
    status: str
    answer: str
    cost_usd: Decimal
    latency_ms: int
    router_model: str | None = None
    error: str | None = None
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()


async def run_prompt(org_id: UUID, user_id: UUID, title: str, prompt: str, target: Target) -> Outcome:
    """Launch `prompt` in a new chat of `user_id`'s and wait for its run to end. A launch the chokepoint refuses
    (over budget, no model for the data) is an outcome with status `skipped` and the refusal's code."""
    async with org_transaction(org_id) as conn:
        chat = await chat_store.insert_chat(conn, org_id, user_id, title[:200])
    request = LaunchRequest(
        org_id=org_id,
        user_id=user_id,
        chat_id=chat.id,
        message=prompt,
        model=target.model,
        mode="inline",
        trigger_source="eval",
        agent=target.agent,
        instructions=target.instructions,
        tools=target.tools,
        approval_policy="deny",  # nobody is there to approve: a call that needs a person is refused
        recall_memories=False,  # a case sees what it says, not its runner's memories
    )
    started = time.monotonic()
    try:
        spec = await launch_run(request)
    except AppError as exc:
        return Outcome(None, "skipped", "", Decimal(0), 0, error=exc.code)
    status = await _until_ended(org_id, spec.run_id)
    async with org_transaction(org_id) as conn:
        messages = await message_store.run_messages(conn, spec.run_id)
        cost = await store.tree_cost(conn, spec.run_id)
    latency = int((time.monotonic() - started) * 1000)
    router = spec.router_model.id if spec.router_model else None
    return Outcome(spec.run_id, status, answer_text(messages), cost, latency, router, tool_calls=tool_calls(messages))


async def _until_ended(org_id: UUID, run_id: UUID) -> str:
    """The run's status once it ended (or `timeout`): its row is polled with a growing pause, the way a delivery
    waits for its run (`workflows.delivery_store.wait_for_run`)."""
    deadline = time.monotonic() + CASE_TIMEOUT_SECONDS
    pause = 0.02
    while True:
        async with org_transaction(org_id) as conn:
            row = await store.get_run(conn, run_id)
        if row is not None and row.status in store.TERMINAL:
            return row.status
        if time.monotonic() > deadline:
            return "timeout"
        await asyncio.sleep(pause)
        pause = min(pause * 2, 0.5)


def tool_calls(messages: list[object]) -> tuple[tuple[str, dict[str, Any]], ...]:
    """The run's tool calls in order: each tool's name and its arguments (an object; `{}` when they did not parse)."""
    calls = []
    for message in messages:
        for part in message.get("parts", []) if isinstance(message, dict) else []:
            if part.get("part_kind") == "tool-call":
                args = part.get("args")
                if isinstance(args, str):
                    try:
                        args = json.loads(args)
                    except ValueError:
                        args = {}
                calls.append((str(part.get("tool_name")), args if isinstance(args, dict) else {}))
    return tuple(calls)


def answer_text(messages: list[object]) -> str:
    """The text of the run's last response."""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("kind") == "response":
            texts = [str(p.get("content", "")) for p in message.get("parts", []) if p.get("part_kind") == "text"]
            if texts:
                return "".join(texts)
    return ""
