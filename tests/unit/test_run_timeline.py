"""A run's timeline as a pure function of what the engine stored (`lifecycle/run_timeline.py`): a call a tool rule
denied is a gate step and no tool step; a call a person denied is the approval's step and no tool step, with what
asked for it; a budget that refused the run's next request ends the timeline; parallel calls start together; no
step carries a tool's arguments or result."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import uuid4

from personal_agent.approvals.store import ApprovalRow, AuditEntry
from personal_agent.lifecycle.run_timeline import Recorded, steps

T0 = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
RUN = uuid4()


def _at(ms: int) -> datetime:
    return T0 + timedelta(milliseconds=ms)


def _call(name: str, call_id: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"part_kind": "tool-call", "tool_name": name, "tool_call_id": call_id, "args": args}


def _result(name: str, call_id: str, ms: int, content: Any) -> dict[str, Any]:
    return {
        "part_kind": "tool-return",
        "tool_name": name,
        "tool_call_id": call_id,
        "content": content,
        "timestamp": _at(ms).isoformat(),
    }


def _approval(call_id: str, status: str, asked: int, decided: int) -> ApprovalRow:
    return ApprovalRow(
        id=uuid4(), run_id=RUN, chat_id=None, tool_call_id=call_id, tool_name="send_demo_message", args={},
        status=status, reason="not today", edited_args=None, decided_by=None, decided_at=_at(decided),
        expires_at=_at(99_000), created_at=_at(asked), kind="approval", answer=None, quorum=1, approvers=[],
    )  # fmt: skip


def _audit(
    action: str, call_id: str, ms: int, detail: dict[str, Any], approval: ApprovalRow | None = None
) -> AuditEntry:
    return AuditEntry(
        id=1, approval_id=approval.id if approval else None, actor_id=None, action=action, detail=detail, at=_at(ms),
        tool_name="send_demo_message", run_id=RUN, chat_id=None, owner_id=None, status=None, tool_call_id=call_id,
    )  # fmt: skip


def test_denied_calls_are_gate_steps_and_a_budget_refusal_ends_the_timeline() -> None:
    denied = _approval("c3", "denied", 2_100, 2_600)
    messages = [
        {
            "kind": "request",
            "timestamp": _at(100).isoformat(),
            "parts": [{"part_kind": "user-prompt", "content": "hi"}],
        },
        {
            "kind": "response",
            "model_name": "m",
            "parts": [
                _call("calculate", "c1", {"expression": "secret-arg-1"}),
                _call("search_knowledge", "c2", {"query": "secret-arg-2"}),
            ],
        },
        {
            "kind": "request",
            "timestamp": _at(1_000).isoformat(),
            "parts": [
                _result("calculate", "c1", 700, "42"),
                _result("search_knowledge", "c2", 900, [{"text": "secret passage", "citation": "a.md"}, {"note": "x"}]),
            ],
        },
        {
            "kind": "response",
            "model_name": "m",
            "parts": [_call("send_demo_message", "c3", {}), _call("post", "c4", {})],
        },
        {
            "kind": "request",
            "timestamp": _at(2_700).isoformat(),
            "parts": [_result("send_demo_message", "c3", 2_650, "not approved"), _result("post", "c4", 2_050, "no")],
        },
    ]
    recorded = Recorded(
        created_at=T0,
        finished_at=_at(2_800),
        ledger={0: _at(500), 1: _at(2_000), -1: _at(50)},
        approvals=[denied],
        audit=[
            _audit("review_asked", "c3", 2_100, {"by": "approve_each", "reason": "x"}, denied),
            _audit(
                "policy_denied", "c4", 2_010, {"effect": "deny", "reason": "no posting", "args": {"a": "secret-arg-3"}}
            ),
        ],
        error={"code": "budget_exceeded", "message": "the org's monthly budget is spent"},
        gated_why={},
    )
    found = steps(messages, 0, recorded)
    assert [(s["kind"], s["label"], s["start_ms"], s["duration_ms"], s["outcome"]) for s in found] == [
        ("side_request", "Routing model", 50, 0, None),
        ("model_request", "Model request 1", 100, 400, "m"),
        ("tool_call", "calculate", 500, 200, "ok"),
        ("retrieval", "search_knowledge", 500, 400, "1 passage"),
        ("model_request", "Model request 2", 1_000, 1_000, "m"),
        ("gate", "Tool rule: send_demo_message", 2_010, 0, "denied"),
        ("gate", "Approval: send_demo_message", 2_100, 500, "denied"),
        ("gate", "Budget", 2_800, 0, "refused"),
    ]
    by_label = {s["label"]: s for s in found}
    assert by_label["Tool rule: send_demo_message"]["detail"] == "no posting"
    assert by_label["Approval: send_demo_message"]["detail"] == "this chat asks a person before every acting call: x"
    assert by_label["Budget"]["detail"] == "the org's monthly budget is spent"
    assert "secret" not in repr(found)
