"""What an output receives: the Standard Webhooks body of an event (`type`, `timestamp`, `data`), read from
Postgres, and the short text a Slack/Teams message or an e-mail says about it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from personal_agent.approvals import store as approval_store
from personal_agent.chats import message_store
from personal_agent.db.pool import Conn
from personal_agent.runs import store as run_store
from personal_agent.settings import get_settings
from personal_agent.workflows import store as workflow_store

MAX_OUTPUT_CHARS = 16_000
MAX_TEXT_CHARS = 3_000


def _answer(messages: list[Any]) -> str:
    """The text of the run's last response (pydantic-ai JSON)."""
    for message in reversed(messages):
        if message.get("kind") == "response":
            return "".join(p.get("content", "") for p in message.get("parts", []) if p.get("part_kind") == "text")
    return ""


def _link(path: str) -> str:
    return get_settings().public_url.rstrip("/") + path


async def _name(conn: Conn, workflow_id: UUID) -> str:
    workflow = await workflow_store.get_row(conn, workflow_id)
    return workflow.name if workflow else ""


async def run_payload(conn: Conn, workflow_id: UUID, run_id: UUID) -> dict[str, Any]:
    run = await run_store.get_run(conn, run_id)
    assert run is not None, "a finished run is in the database"
    output = _answer(await message_store.run_messages(conn, run_id)) if run.status == "succeeded" else ""
    data = {
        "workflow_id": str(workflow_id),
        "workflow_name": await _name(conn, workflow_id),
        "run_id": str(run_id),
        "chat_id": str(run.chat_id),
        "status": run.status,
        "error": run.error,
        "output": output[:MAX_OUTPUT_CHARS],
        "run_url": _link(f"/chats/{run.chat_id}"),
    }
    return {"type": "run.finished", "timestamp": datetime.now(UTC).isoformat(), "data": data}


async def approval_payloads(
    conn: Conn, workflow_id: UUID, run_id: UUID, approval_ids: list[str]
) -> list[tuple[str, dict[str, Any]]]:
    """(approval id, body) for each of the run's approvals still pending."""
    wanted = set(approval_ids)
    name = await _name(conn, workflow_id)
    bodies = []
    for row in await approval_store.list_rows(conn, None, "pending"):
        if str(row.id) not in wanted or row.run_id != run_id:
            continue
        data = {
            "workflow_id": str(workflow_id),
            "workflow_name": name,
            "run_id": str(run_id),
            "approval_id": str(row.id),
            "tool": row.tool_name,
            "args": row.args,
            "expires_at": row.expires_at.isoformat(),
            "approvals_url": _link("/approvals"),
        }
        bodies.append(
            (str(row.id), {"type": "approval.requested", "timestamp": datetime.now(UTC).isoformat(), "data": data})
        )
    return bodies


async def question_payloads(
    conn: Conn, workflow_id: UUID, run_id: UUID, question_ids: list[str]
) -> list[tuple[str, dict[str, Any]]]:
    """(question id, body) for each of the run's `ask_user` questions still pending, with the link to answer it:
    the run's chat, where the web chat shows the question's form."""
    wanted = set(question_ids)
    name = await _name(conn, workflow_id)
    bodies = []
    for row in await approval_store.list_rows(conn, None, "pending", kind="question"):
        if str(row.id) not in wanted or row.run_id != run_id:
            continue
        data = {
            "workflow_id": str(workflow_id),
            "workflow_name": name,
            "run_id": str(run_id),
            "question_id": str(row.id),
            "question": row.args.get("question", ""),
            "choices": row.args.get("choices"),
            "expires_at": row.expires_at.isoformat(),
            "answer_url": _link(f"/chats/{row.chat_id}"),
        }
        bodies.append(
            (str(row.id), {"type": "question.asked", "timestamp": datetime.now(UTC).isoformat(), "data": data})
        )
    return bodies


def summary(payload: dict[str, Any]) -> tuple[str, str]:
    """(subject, text) of an event for people: a chat message or an e-mail."""
    data = payload["data"]
    name = data.get("workflow_name") or "A workflow"
    if payload["type"] == "question.asked":
        subject = f"{name}: a question for you"
        choices = f"\nChoices: {', '.join(data['choices'])}" if data.get("choices") else ""
        asked = data["question"][:MAX_TEXT_CHARS]
        text = f"{subject}\n{asked}{choices}\nAnswer by {data['expires_at']}: {data['answer_url']}"
        return subject, text
    if payload["type"] == "approval.requested":
        args = json.dumps(data.get("args"), ensure_ascii=False)[:500]
        subject = f"{name}: approval needed for {data['tool']}"
        text = f"{subject}\nArguments: {args}\nApprove or deny by {data['expires_at']}: {data['approvals_url']}"
        return subject, text
    status = data["status"]
    subject = f"{name}: run {status}"
    detail = data["output"] if status == "succeeded" else (data.get("error") or {}).get("message", "")
    text = f"{subject}\n\n{detail[:MAX_TEXT_CHARS]}\n\n{data['run_url']}".strip()
    return subject, text
