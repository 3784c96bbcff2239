"""A run's steps on a timeline, for its trace (`lifecycle/run_trace.py`): each model request, tool call, knowledge
retrieval and gate decision (a person's approval and what asked for it, a rule's or the reviewing model's verdict,
the budget's refusal), with its start in milliseconds after the run was created and its duration.

Read from what the engine already stores: the messages' own timestamps in the run's checkpoint (a request's when it
was sent, a tool result's when it returned), the ledger (when each response was recorded), the run's approvals
(asked, decided), the audit lines of its tool reviews, and the run's error. No tool argument or result is copied
into a step: a step names a tool, a decision and why; what was sent stays in the trace's requests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from personal_agent.approvals.store import ApprovalRow, AuditEntry

PASSAGE_TOOLS = ("search_knowledge",)
GATE_ERRORS = {
    "budget_exceeded": "Budget",
    "classification_blocked": "Classification",
    "limit_exceeded": "Run limits",
}
"""A run error that is a gate refusing to go on, and the gate's name on the timeline."""
VERDICTS = {
    "policy_denied": ("Tool rule", "denied"),
    "judge_denied": ("Reviewing model", "denied"),
    "policy_matched": ("Tool rule", "matched"),
}
ASKED_BY = {
    "rule": "a tool rule asks a person",
    "approve_each": "this chat asks a person before every acting call",
    "judge": "the reviewing model asks a person",
}


@dataclass(frozen=True)
class Recorded:
    """What the timeline reads besides the messages."""

    created_at: datetime
    finished_at: datetime | None
    ledger: dict[int, datetime]
    """When each response was recorded, by request index (negative: the router's and summaries' requests)."""
    approvals: list[ApprovalRow]
    audit: list[AuditEntry]
    error: dict[str, Any] | None
    gated_why: dict[str, str]
    """Why the gates asked a person for a call, by tool call id (when no rule or review mode asked)."""


def at(value: Any) -> datetime | None:
    """A stored timestamp (pydantic-ai's ISO text, or a datetime) as an aware datetime."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def steps(messages: list[dict[str, Any]], start: int, rec: Recorded) -> list[dict[str, Any]]:
    """The run's steps, ordered by start (ties keep the order they happened in)."""
    now = datetime.now(UTC)
    found = [*_requests_and_calls(messages, start, rec), *_gates(rec, now), *_side_requests(rec)]
    views = [_view(rec.created_at, now, *step) for step in found]
    return sorted(views, key=lambda s: s["start_ms"])


Step = tuple[str, str, datetime, datetime | None, dict[str, Any]]
"""kind, label, start, end (None: still going), the rest of the step's fields."""


def _view(origin: datetime, now: datetime, kind: str, label: str, began: datetime, ended: datetime | None,
          rest: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    start_ms = max(0, round((began - origin).total_seconds() * 1000))
    end_ms = max(start_ms, round(((ended or now) - origin).total_seconds() * 1000))
    fields = {"request_index": None, "tool_call_id": None, "outcome": None, "detail": None} | rest
    return {"kind": kind, "label": label, "start_ms": start_ms, "duration_ms": end_ms - start_ms} | fields


def _returns(messages: list[dict[str, Any]], start: int) -> dict[str, list[tuple[int, dict[str, Any]]]]:
    """Each tool call id's results (tool returns and retry prompts) with their message's position."""
    out: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for i, message in enumerate(messages[start:], start):
        for part in message.get("parts", []) if message.get("kind") == "request" else []:
            if part.get("part_kind") in ("tool-return", "retry-prompt") and part.get("tool_call_id"):
                out.setdefault(part["tool_call_id"], []).append((i, part))
    return out


def _requests_and_calls(messages: list[dict[str, Any]], start: int, rec: Recorded) -> list[Step]:
    """A step per model response (from its request's sending to the response's recording) and per tool call it
    made that ran (from the response, or the person's decision, to its result)."""
    returns = _returns(messages, start)
    approved = {a.tool_call_id: a for a in rec.approvals if a.kind == "approval"}
    refused = {line.tool_call_id for line in rec.audit if line.action in ("policy_denied", "judge_denied")}
    out: list[Step] = []
    sent_at: datetime | None = None
    index = 0
    for i, message in enumerate(messages[start:], start):
        if message.get("kind") == "request":
            sent_at = at(message.get("timestamp")) or sent_at
            continue
        ended = rec.ledger.get(index) or at(message.get("timestamp")) or sent_at or rec.created_at
        began = min(sent_at or ended, ended)
        model = {"request_index": index, "outcome": message.get("model_name")}
        out.append(("model_request", f"Model request {index + 1}", began, ended, model))
        for part in message.get("parts", []):
            call_id = part.get("tool_call_id")
            result = next((p for pos, p in returns.get(call_id or "", []) if pos > i), None)
            approval = approved.get(call_id or "")
            if part.get("part_kind") != "tool-call" or result is None or call_id in refused:
                continue
            if approval is not None and approval.status != "approved":
                continue  # not run: the gate's step says why
            began_call = max(ended, approval.decided_at) if approval and approval.decided_at else ended
            out.append(_call_step(part, result, index, began_call))
        index += 1
    return out


def _call_step(call: dict[str, Any], result: dict[str, Any], index: int, began: datetime) -> Step:
    name = str(call.get("tool_name"))
    ended = max(at(result.get("timestamp")) or began, began)
    failed = result.get("part_kind") == "retry-prompt"
    rest = {"request_index": index, "tool_call_id": call.get("tool_call_id"), "outcome": "error" if failed else "ok"}
    if name in PASSAGE_TOOLS and not failed:
        count = _passages(result.get("content"))
        return ("retrieval", name, began, ended, rest | {"outcome": f"{count} passage{'s' if count != 1 else ''}"})
    return ("tool_call", name, began, ended, rest)


def _passages(content: Any) -> int:
    if isinstance(content, str):
        try:
            content = json.loads(content)
        except ValueError:
            return 0
    return sum(1 for p in content if isinstance(p, dict) and "text" in p) if isinstance(content, list) else 0


def _gates(rec: Recorded, now: datetime) -> list[Step]:
    """A step per approval or question (asked until decided), per rule or reviewing model verdict on a call that
    no approval stands for, and the gate that ended the run, if one did."""
    asked = {line.approval_id: line.detail for line in rec.audit if line.action == "review_asked"}
    out: list[Step] = []
    for a in rec.approvals:
        ended = a.decided_at or (a.expires_at if a.status == "expired" else None)
        rest: dict[str, Any] = {"tool_call_id": a.tool_call_id, "outcome": a.status}
        if a.kind == "question":
            out.append(("gate", f"Question for the user ({a.tool_name})", a.created_at, ended, rest))
            continue
        why = asked.get(a.id)
        detail = _asked_why(why) if why else rec.gated_why.get(a.tool_call_id, "the gates ask a person")
        out.append(("gate", f"Approval: {a.tool_name}", a.created_at, ended, rest | {"detail": detail}))
    for line in rec.audit:
        if line.approval_id is not None or line.action not in VERDICTS:
            continue
        who, outcome = VERDICTS[line.action]
        effect = str(line.detail.get("effect") or "")
        if line.action == "policy_matched" and effect != "allow":
            continue  # an `ask` rule's approval is its own step
        reason = str(line.detail.get("reason") or "") or None
        verdict = "allowed" if effect == "allow" else outcome
        rest = {"tool_call_id": line.tool_call_id, "outcome": verdict, "detail": reason}
        out.append(("gate", f"{who}: {line.tool_name}", line.at, line.at, rest))
    code = str((rec.error or {}).get("code") or "")
    if code in GATE_ERRORS and rec.finished_at is not None:
        refusal = {"outcome": "refused", "detail": str((rec.error or {}).get("message") or code)}
        out.append(("gate", GATE_ERRORS[code], rec.finished_at, rec.finished_at, refusal))
    return out


def _asked_why(review: dict[str, Any]) -> str:
    by = ASKED_BY.get(str(review.get("by")), str(review.get("by") or "the gates"))
    reason = str(review.get("reason") or "")
    return f"{by}: {reason}" if reason and reason not in by else by


def _side_requests(rec: Recorded) -> list[Step]:
    """The router's and the summaries' requests (negative ledger indexes), as moments: the ledger says when each
    was recorded, not when it was sent."""
    out: list[Step] = []
    for index, when in sorted(rec.ledger.items()):
        if index < 0:
            label = "Routing model" if index == -1 else "Summary or review request"
            out.append(("side_request", label, when, when, {"request_index": index}))
    return out
