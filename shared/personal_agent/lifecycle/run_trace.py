"""A run's trace, "what did the model see?": for each model request, the instructions it was given (the spec's and
the user's recalled memories), the new parts it was sent (the user's turn, tool results and retrieved passages),
the tool definitions on offer (an MCP tool's as the server described it at launch), the history as sent after the
context cut (`history_from`, and the summary that stood in for the older messages), and what it answered and cost;
and the run's steps on a timeline (`lifecycle/run_timeline.py`).

Built from what the engine already stores: the RunSpec snapshot, the latest checkpoint (the whole history, each
request's cut in its metadata), the run's ledger rows, approvals and audit lines, and the MCP servers' discovery
cache (a tool's definition only when its hash is the one the run launched with). Nothing of the spec beyond what
the model was given (no keys, key ids, base URLs or server URLs). Visible to the run's owner and the org's admins
(`run_views.visible_run`, 404 otherwise).

Over 300 lines because the trace joins five stores' rows to the history in one place, the one view of a run that
shows all of them."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from personal_agent.approvals import store as approval_store
from personal_agent.chats import message_store
from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle import run_timeline
from personal_agent.lifecycle.run_timeline import PASSAGE_TOOLS, Recorded
from personal_agent.lifecycle.run_views import visible_run
from personal_agent.mcp_servers import store as mcp_store
from personal_agent.runs import store
from personal_agent.tools.registry import get_tool

CHARS_PER_TOKEN = 3  # the engine's conservative estimate (`engine.context_window.tokens`)
MAX_PART_CHARS = 20_000
CONTEXT_CUT = "context_cut"  # `engine.context_fit.CONTEXT_CUT` (not imported: it would load pydantic-ai)


async def run_trace(principal: Principal, run_id: UUID) -> dict[str, Any]:
    row = await visible_run(principal, run_id)
    spec = row.spec or {}
    async with org_transaction(principal.org_id) as conn:
        checkpoint = await store.latest_checkpoint(conn, run_id)
        first = await _first_state(conn, run_id)
        usage = await _usage_rows(conn, run_id)
        approvals = await approval_store.of_runs(conn, [run_id])
        audit = await approval_store.audit_of_run(conn, run_id)
        servers = await mcp_store.list_servers(conn) if any(t.get("server_id") for t in spec.get("tools", [])) else []
        messages = checkpoint.messages if checkpoint else []
        summaries = await _summaries(conn, row.chat_id, messages)
    start = max(int(first.get("history_len", 0)) - int(spec.get("input_messages", 1)), 0)
    window, answer = _window(spec)
    asked = {line.approval_id for line in audit if line.action == "review_asked"}
    gated = [a.tool_call_id for a in approvals if a.kind == "approval" and a.id not in asked]
    recorded = Recorded(
        created_at=row.created_at,
        finished_at=row.finished_at,
        ledger={int(u["request_index"]): u["created_at"] for u in usage},
        approvals=approvals,
        audit=audit,
        error=row.error,
        gated_why=_gated_why(spec, row.routing, messages, gated) if gated else {},
    )
    return {
        "run_id": str(row.id),
        "status": row.status,
        "model": row.model_name,
        "agent": {k: spec["agent"][k] for k in ("slug", "version")} if spec.get("agent") else None,
        "instructions": spec.get("instructions", ""),
        "tools": _tools(spec, servers),
        "context": {"window_tokens": window, "answer_tokens": answer, "budget_tokens": window - answer},
        "history": [_message_view(m) for m in messages],
        "requests": _requests(messages, start, spec, usage, window - answer, summaries),
        "steps": run_timeline.steps(messages, start, recorded),
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


def _tools(spec: dict[str, Any], servers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool definitions the run offered: first-party ones, MCP ones (as their server described them at launch)
    and the caller's client tools, each with its description and parameters' JSON schema."""
    from personal_agent.tools.toolset import pydantic_tool  # pydantic-ai: only when a trace is asked for

    out = []
    for tool in spec.get("tools", []):
        if tool.get("server_id"):
            out.append(_mcp_tool(tool, servers))
            continue
        found = get_tool(tool["name"])
        out.append(
            {
                "name": tool["name"],
                "description": found.description if found else "",
                "source": "first_party",
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


def _mcp_tool(tool: dict[str, Any], servers: list[dict[str, Any]]) -> dict[str, Any]:
    """An MCP tool as its server's last discovery describes it, when that is still the definition the run launched
    with (the same hash: the engine refuses a tool that changed, so this is what the model was offered); else by
    name, saying so."""
    server = next((s for s in servers if str(s["id"]) == str(tool["server_id"])), None)
    found = (server or {}).get("discovered") or {}
    listed = [*(found.get("tools") or []), *(found.get("last_known_tools") or [])]
    entry = next(
        (
            t
            for t in listed
            if t.get("name") == tool.get("remote_name") and t.get("schema_hash") == tool.get("schema_hash")
        ),
        None,
    )
    described = str(entry.get("description") or "") if entry else "(its server describes it differently now)"
    return {
        "name": tool["name"],
        "description": described,
        "source": "mcp",
        "server": server["name"] if server else None,
        "acts": bool(tool.get("acts")),
        "untrusted": bool(tool.get("untrusted")),
        "parameters": entry.get("input_schema") if entry else None,
    }


def _gated_why(
    spec: dict[str, Any], routing: dict[str, Any] | None, messages: list[Any], call_ids: list[str]
) -> dict[str, str]:
    """Which gate asked a person for each of these calls (`governance/tool_gates.py`, in its order): the tool's
    declared approval, untrusted content in the run's context before the call, or the router's confidence."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter  # only for a run a gate stopped

    from personal_agent.spec.labels import run_labels
    from personal_agent.spec.run_spec import RunSpec

    try:
        run_spec = RunSpec.model_validate(spec)
        history = ModelMessagesTypeAdapter.validate_python(messages)
    except ValueError:
        return {}
    out: dict[str, str] = {}
    for i, message in enumerate(history):
        for call in message.tool_calls if message.kind == "response" else []:
            if call.tool_call_id not in call_ids or call.tool_call_id in out:
                continue
            ref = next((t for t in run_spec.tools if t.name == call.tool_name), None)
            tool = get_tool(call.tool_name) if ref is not None and ref.server_id is None else None
            declared = ref is not None and (ref.requires_approval or ref.approval == "always")
            if declared or (tool is not None and tool.requires_approval):
                out[call.tool_call_id] = "declared: the tool asks a person before each call"
            elif run_labels(run_spec, history[:i]).untrusted:
                out[call.tool_call_id] = "untrusted content is in the run's context: acting tools need a person"
            elif routing is None or "confidence" not in routing:
                out[call.tool_call_id] = "confidence: no routing decision for this run, so acting tools need a person"
            else:
                threshold = run_spec.confidence_threshold
                out[call.tool_call_id] = f"confidence: {float(routing['confidence']):.2f} is under {threshold:.2f}"
    return out


async def _summaries(conn: Conn, chat_id: UUID | None, messages: list[Any]) -> dict[int, str]:
    """The text of each summary a request of the run was sent in place of its older messages, by message id."""
    ids = {
        int(cut["summary_id"])
        for m in messages
        if isinstance(cut := (m.get("metadata") or {}).get(CONTEXT_CUT), dict) and cut.get("summary_id") is not None
    }
    out: dict[int, str] = {}
    if chat_id is None:
        return out  # a run without a chat has no stored summaries
    for summary_id in sorted(ids):
        node = await message_store.message_node(conn, chat_id, summary_id)
        if node is not None and node.kind == "summary":
            out[summary_id] = _text(node.message["parts"][0]["content"])
    return out


def _message_view(message: dict[str, Any]) -> dict[str, Any]:
    return {"kind": message.get("kind", ""), "parts": [_part_view(p) for p in message.get("parts", [])]}


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
    messages: list[Any],
    start: int,
    spec: dict[str, Any],
    usage: list[dict[str, Any]],
    budget: int,
    summaries: dict[int, str] | None = None,
) -> list[dict[str, Any]]:
    """One entry per model response of the run: what the request before it carried, and the response."""
    by_index = {u["request_index"]: u for u in usage if u["request_index"] >= 0}
    base = spec.get("instructions", "")
    out: list[dict[str, Any]] = []
    sent_from, chars, given, cut = start, 0, None, None  # the history's characters so far: one pass, however long
    for i, message in enumerate(messages):
        if message.get("kind") == "request":
            given = message.get("instructions") or given
            cut = (message.get("metadata") or {}).get(CONTEXT_CUT)
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
                "cut": isinstance(cut, dict) or history_tokens > budget,
                **_cut_view(cut, summaries or {}),
                "response": [_part_view(p) for p in message.get("parts", [])],
                "usage": _usage_view(by_index[index]) if index in by_index else None,
            }
        )
        sent_from = i + 1
    return out


def _cut_view(cut: Any, summaries: dict[int, str]) -> dict[str, Any]:
    """Where the history the request was sent starts (`history_from`), and what stood in for the messages before it:
    their summary, or nothing (they were left out)."""
    if not isinstance(cut, dict):
        return {"history_from": 0, "summary": None}
    summary_id = cut.get("summary_id")
    return {
        "history_from": int(cut.get("dropped") or 0),
        "summary": summaries.get(int(summary_id)) if summary_id is not None else None,
    }


def _after(given: str, base: str) -> str:
    """What the request's instructions add to the spec's: the recalled memories."""
    return given[len(base) :].strip() if base and given.startswith(base) else ("" if given == base else given)
