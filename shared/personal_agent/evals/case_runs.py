"""One prompt as a normal, metered run through the launch chokepoint (trigger `eval`), in a chat of its own, and
what came of it once it ended: the answer's text, the run's cost (its sub-agents included) and latency."""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from uuid import UUID

from personal_agent.chats import message_store, policy_store
from personal_agent.chats import store as chat_store
from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.evals import case_files
from personal_agent.knowledge.cited import retrieved
from personal_agent.lifecycle.launch import LaunchRequest, launch_run
from personal_agent.lifecycle.local_drives import wait_for_local_runs
from personal_agent.runs import store
from personal_agent.settings import get_settings
from personal_agent.spec.labels import CLEAN, Labels
from personal_agent.spec.run_spec import RunSpec


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
    passages: tuple[dict[str, Any], ...] = ()


async def launch_prompt(
    org_id: UUID,
    user_id: UUID,
    title: str,
    prompt: str,
    target: Target,
    *,
    temporary: bool = False,
    entered: Labels = CLEAN,
    case_id: UUID | None = None,
    history: tuple[dict[str, str], ...] = (),
) -> RunSpec:
    """Launch `prompt` in a new chat of `user_id`'s (a temporary one, never listed, for a judge) through the one
        chokepoint, as a normal metered run, with the files of the case `case_id` as its attachments; its end moves the
        evaluation on (`evals.progress`); `history` (a case's earlier turns, `{role, content}`) is the chat's
    conversation before it. Raises the launch's refusal (over budget, no model for the data)."""
    async with org_transaction(org_id) as conn:
        chat = await chat_store.insert_chat(conn, org_id, user_id, title[:200])
        if temporary:
            await policy_store.mark_temporary(conn, org_id, chat.id)
        if history:
            await message_store.append_messages(conn, org_id, chat.id, None, [_turn(m) for m in history])
    files = await case_files.attach_to_chat(org_id, user_id, chat.id, case_id) if case_id else ()
    request = LaunchRequest(
        org_id=org_id,
        user_id=user_id,
        chat_id=chat.id,
        message=prompt,
        attachments=files,
        model=target.model,
        trigger_source="eval",
        agent=target.agent,
        instructions=target.instructions,
        tools=target.tools,
        approval_policy="deny",  # nobody is there to approve: a call that needs a person is refused
        recall_memories=False,  # a case sees what it says, not its runner's memories
        entered=entered,  # what a judge reads carries the labels of the run it judges
    )
    return await launch_run(request)


def _turn(message: dict[str, str]) -> dict[str, Any]:
    """A case's earlier turn as a stored message (pydantic-ai JSON)."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ModelResponse, TextPart, UserPromptPart

    built = (
        ModelRequest(parts=[UserPromptPart(content=message["content"])])
        if message["role"] == "user"
        else ModelResponse(parts=[TextPart(content=message["content"])], model_name="eval-case")
    )
    return dict(ModelMessagesTypeAdapter.dump_python([built], mode="json")[0])


async def drive_launched() -> None:
    """Under `pa dev` a run launched from a handler of the local Lambda dispatcher (the deliver function) is a task
    on that thread's loop, which runs only while a handler runs: drive such runs to their end before the handler
    returns (on AWS the run worker Lambda drives them)."""
    if get_settings().is_local:
        await wait_for_local_runs()


async def outcome_of(conn: Conn, run_id: UUID) -> Outcome:
    """What an ended run gave: its answer, its status, its tree's cost, its latency (stored to finished)."""
    row = await store.get_run(conn, run_id)
    if row is None:
        return Outcome(run_id, "failed", "", Decimal(0), 0, error="run_gone")
    messages = await message_store.run_messages(conn, run_id)
    cost = await store.tree_cost(conn, run_id)
    latency = int(((row.finished_at or row.created_at) - row.created_at).total_seconds() * 1000)
    router = (row.spec.get("router_model") or {}).get("id") if isinstance(row.spec, dict) else None
    calls, found = tool_calls(messages), retrieved(messages)
    return Outcome(run_id, row.status, answer_text(messages), cost, latency, router, tool_calls=calls, passages=found)


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
