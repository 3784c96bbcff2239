"""A run's trace, "what did the model see?": for each model request, the instructions it was given (the spec's and
the user's recalled memories), the new parts it was sent (the user's turn, tool results and retrieved passages),
the tool definitions on offer, the history's size against the context budget, and what it answered and cost.

Built from what the engine already stores: the RunSpec snapshot, the latest checkpoint (the whole history) and the
run's ledger rows. Nothing of the spec beyond what the model was given (no keys, key ids, base URLs or server
URLs). Visible to the run's owner and the org's admins (`run_views.visible_run`, 404 otherwise)."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle.run_views import visible_run
from personal_agent.runs import store
from personal_agent.tools.registry import get_tool

CHARS_PER_TOKEN = 3  # the engine's conservative estimate (`engine.context_window.tokens`)
PASSAGE_TOOLS = ("search_knowledge",)
MAX_PART_CHARS = 20_000


async def run_trace(principal: Principal, run_id: UUID) -> dict[str, Any]:
    row = await visible_run(principal, run_id)
    async with org_transaction(principal.org_id) as conn:
        checkpoint = await store.latest_checkpoint(conn, run_id)
        first = await _first_state(conn, run_id)
        usage = await _usage_rows(conn, run_id)
    spec = row.spec or {}
    messages = checkpoint.messages if checkpoint else []
    start = max(int(first.get("history_len", 0)) - int(spec.get("input_messages", 1)), 0)
    window, answer = _window(spec)
    return {
        "run_id": str(row.id),
        "status": row.status,
        "model": row.model_name,
        "agent": {k: spec["agent"][k] for k in ("slug", "version")} if spec.get("agent") else None,
        "instructions": spec.get("instructions", ""),
        "tools": _tools(spec),
        "context": {"window_tokens": window, "answer_tokens": answer, "budget_tokens": window - answer},
        "requests": _requests(messages, start, spec, usage, window - answer),
        "summaries": [_usage_view(u) for u in usage if u["request_index"] < 0],
        "created_at": row.created_at.isoformat(),
        "finished_at": row.finished_at.isoformat() if row.finished_at else None,
    }


async def _first_state(conn: Any, run_id: UUID) -> dict[str, Any]:
    cur = await conn.execute("SELECT state FROM run_checkpoints WHERE run_id = %s AND seq = 0", [run_id])
    got = await cur.fetchone()
    return dict(got["state"]) if got else {}


async def _usage_rows(conn: Any, run_id: UUID) -> list[dict[str, Any]]:
    cur = await conn.execute(
        "SELECT request_index, model_name, input_tokens, output_tokens, cost_usd, created_at FROM usage_records"
        " WHERE run_id = %s ORDER BY request_index",
        [run_id],
    )
    return list(await cur.fetchall())


def _usage_view(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": row["model_name"],
        "input_tokens": int(row["input_tokens"]),
        "output_tokens": int(row["output_tokens"]),
        "cost_usd": float(row["cost_usd"]) if row["cost_usd"] is not None else None,
        "at": row["created_at"].isoformat(),
    }


def _window(spec: dict[str, Any]) -> tuple[int, int]:
    refs = spec.get("model_chain") or []
    window = min((int(r.get("context_window", 128_000)) for r in refs), default=128_000)
    answer = min(min((int(r.get("max_output_tokens", 4096)) for r in refs), default=4096), window // 4)
    return window, answer


def _tools(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool definitions the run offered: first-party ones and the caller's client tools with their description
    and JSON schema, MCP ones by name."""
    from personal_agent.tools.toolset import pydantic_tool  # pydantic-ai: only when a trace is asked for

    out = []
    for tool in spec.get("tools", []):
        found = get_tool(tool["name"]) if not tool.get("server_id") else None
        out.append(
            {
                "name": tool["name"],
                "description": found.description if found else "",
                "source": "mcp" if tool.get("server_id") else "first_party",
                "acts": bool(tool.get("acts")),
                "untrusted": bool(tool.get("untrusted")),
                "parameters": pydantic_tool(found).tool_def.parameters_json_schema if found else None,
            }
        )
    for tool in spec.get("client_tools", []):
        out.append(
            {
                "name": tool["name"],
                "description": tool.get("description", ""),
                "source": "client",
                "acts": True,
                "untrusted": True,
                "parameters": tool.get("parameters"),
            }
        )
    return out


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text[:MAX_PART_CHARS]


def _part_view(part: dict[str, Any]) -> dict[str, Any]:
    kind = part.get("part_kind", "")
    view: dict[str, Any] = {"kind": kind}
    if kind in ("tool-return", "retry-prompt", "tool-call"):
        view["tool"] = part.get("tool_name")
    if kind == "tool-call":
        view["content"] = _text(part.get("args"))
    elif kind != "thinking":
        view["content"] = _text(part.get("content", ""))
    return view


def _requests(
    messages: list[Any], start: int, spec: dict[str, Any], usage: list[dict[str, Any]], budget: int
) -> list[dict[str, Any]]:
    """One entry per model response of the run: what the request before it carried, and the response."""
    by_index = {u["request_index"]: u for u in usage if u["request_index"] >= 0}
    base = spec.get("instructions", "")
    out: list[dict[str, Any]] = []
    sent_from, chars, given = start, 0, None  # the history's characters so far: one pass, however long the run
    for i, message in enumerate(messages):
        if message.get("kind") == "request":
            given = message.get("instructions") or given
        if i < start or message.get("kind") != "response":
            chars += len(json.dumps(message, default=str))
            continue
        new = [p for m in messages[sent_from:i] for p in m.get("parts", []) if m.get("kind") == "request"]
        history_tokens = -(-chars // CHARS_PER_TOKEN)
        chars += len(json.dumps(message, default=str))
        index = len(out)
        out.append(
            {
                "index": index,
                "instructions": given or "",
                "memories": _after(given or "", base),
                "sent": [_part_view(p) for p in new],
                "passages": [_text(p.get("content")) for p in new if p.get("tool_name") in PASSAGE_TOOLS],
                "history_messages": i,
                "history_tokens": history_tokens,
                "cut": history_tokens > budget,
                "response": [_part_view(p) for p in message.get("parts", [])],
                "usage": _usage_view(by_index[index]) if index in by_index else None,
            }
        )
        sent_from = i + 1
    return out


def _after(given: str, base: str) -> str:
    """What the request's instructions add to the spec's: the recalled memories."""
    return given[len(base) :].strip() if base and given.startswith(base) else ("" if given == base else given)
