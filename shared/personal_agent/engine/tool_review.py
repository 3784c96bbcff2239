"""Every tool call's review, once its arguments are validated and before it runs (a pydantic-ai capability's
`after_tool_validate`, so first-party, MCP and the caller's own tools all pass it, in a sub-agent and a headless
run alike):

1. The org's rules (`governance/policy_rules.py`), first match wins. `deny` refuses the call (a tool error the
   model sees), in every mode and also after a person approved (edited arguments are checked again). `ask`
   makes a person decide (two people for a `quorum: 2` rule). `allow` lifts the tool's declared approval and
   the confidence gate, never the untrusted-content gate. Log-only rules that match are written to the approval
   audit as what they would have done; they change nothing.
2. The gates (`governance/tool_gates.py`: declared approval, untrusted content, confidence).
3. The run's review mode: `approve_each` asks a person for every acting call; `judge` has the run's cheap
   router model review each acting call (its cost on the ledger at a negative request index, like the router's
   -1): its `deny` is final, its `ask` goes to a person, its `approve` leaves the call to 1 and 2.

A person's approval (`ctx.tool_call_approved`) settles 2 and 3. Asking is pydantic-ai's `ApprovalRequired`, with
what asked in its metadata (`engine/deferred.py` stores the quorum and the escalation time with the approval).
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ApprovalRequired, ToolFailed
from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart
from pydantic_ai.tools import ToolDefinition

from personal_agent import otel_export
from personal_agent.approvals import escalation_schedule, review_store
from personal_agent.approvals.store import PendingApproval
from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.db.retry import retrying
from personal_agent.engine import usage
from personal_agent.governance.budgets import BudgetExceeded, reserve_request
from personal_agent.governance.judge import JudgeVerdict, judge_call, judge_prompt
from personal_agent.governance.policy_rules import CallFacts, RuleMatch, decide
from personal_agent.governance.tool_gates import needs_approval
from personal_agent.mcp_servers.toolsets import call_needs_approval
from personal_agent.spec.labels import Labels, run_labels
from personal_agent.spec.run_deps import RunDeps
from personal_agent.spec.run_spec import RunSpec
from personal_agent.tools.registry import get_tool

log = logging.getLogger("personal_agent.engine.tool_review")
JUDGE_INDEX_BASE = -2
"""The judge's ledger rows: request index -2 for the run's first tool call, -3 for its second, ... (the router
is -1); the same call always gets the same index, so a retried step is never billed twice."""
DENIED = "Denied by the organisation's tool policy"
JUDGE_DENIED = "Denied by the reviewing model"


@dataclass
class ToolReview(AbstractCapability[RunDeps]):
    """Reviews each call after its arguments are validated (see the module)."""

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def after_tool_validate(
        self, ctx: RunContext[RunDeps], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any
    ) -> Any:
        if isinstance(args, dict):
            await _traced_review(ctx, call, tool_def, args)
        return args


async def _traced_review(
    ctx: RunContext[RunDeps], call: ToolCallPart, tool_def: ToolDefinition, args: dict[str, Any]
) -> None:
    """`review_call` under a span of its own saying what the gates decided (`allow`, `deny`, `ask`) when traces
    are on."""
    if not otel_export.enabled():
        await review_call(ctx, call, tool_def, args)
        return
    names = {"gen_ai.tool.name": call.tool_name, "gen_ai.tool.call.id": call.tool_call_id}
    with otel_export.span(f"gate {call.tool_name}", {**names, "pa.run_id": str(ctx.deps.spec.run_id)}) as span:
        decision = "allow"
        try:
            await review_call(ctx, call, tool_def, args)
        except ToolFailed:
            decision = "deny"
            raise
        except ApprovalRequired:
            decision = "ask"
            raise
        finally:
            if span is not None:
                span.set_attribute("pa.gate.decision", decision)


def _gates(ctx: RunContext[RunDeps], name: str) -> tuple[bool, bool]:
    """Whether the tool acts, and whether the gates alone want a person for it."""
    spec, ref = ctx.deps.spec, ctx.deps.tool_ref(name)
    if ref is not None and ref.server_id is not None:
        return ref.acts, call_needs_approval(ctx, ref)
    tool = get_tool(name) if ref is not None else None
    if tool is None:
        return False, False  # not a tool of the snapshot (the caller's own): the caller runs it
    acts, declared = tool.acts or ref.acts, tool.requires_approval or ref.requires_approval  # type: ignore[union-attr]
    return acts, needs_approval(spec, ctx.messages, acts=acts, declared=declared, routing=ctx.deps.routing)


def _call(spec: RunSpec, call: ToolCallPart) -> dict[str, Any]:
    return {
        "run_id": spec.run_id,
        "chat_id": spec.chat_id,
        "tool_name": call.tool_name,
        "tool_call_id": call.tool_call_id,
    }


async def _audit(
    spec: RunSpec, call: ToolCallPart, match: RuleMatch | None, action: str, detail: dict[str, Any]
) -> None:
    async def write() -> None:
        async with org_transaction(spec.org_id) as conn:
            await review_store.audit_call(
                conn, spec.org_id, _call(spec, call), match.rule.id if match else None, action, detail
            )

    await retrying(write, what="a tool review audit line")


def _rule_detail(match: RuleMatch, args: dict[str, Any]) -> dict[str, Any]:
    rule = match.rule
    detail = {"effect": match.effect, "reason": rule.reason, "tool": rule.tool, "when": rule.when, "args": args}
    return detail | ({"error": match.error} if match.error else {})


def _ask(by: str, reason: str, match: RuleMatch | None = None) -> ApprovalRequired:
    review = {"by": by, "reason": reason, "quorum": match.rule.quorum if match else 1}
    if match is not None:
        review["rule_id"] = str(match.rule.id)
    return ApprovalRequired(metadata={"review": review})


async def review_call(
    ctx: RunContext[RunDeps], call: ToolCallPart, tool_def: ToolDefinition, args: dict[str, Any]
) -> None:
    """Raise `ToolFailed` (denied) or `ApprovalRequired` (a person decides); return when the call may run."""
    spec = ctx.deps.spec
    labels = run_labels(spec, ctx.messages)
    enforced, would = decide(spec.tool_policy.rules, _facts(spec, call, args, labels))
    for match in would:
        await _audit(spec, call, match, "policy_log", _rule_detail(match, args))
    if enforced is not None and enforced.effect == "deny":
        await _audit(spec, call, enforced, "policy_denied", _rule_detail(enforced, args))
        raise ToolFailed(f"{DENIED}: {enforced.rule.reason or 'this call is not allowed'}.")
    if ctx.tool_call_approved or tool_def.kind == "external":
        return  # a person approved it (its arguments still passed the rules); the caller's own tool: only rules
    if enforced is not None and enforced.effect == "ask":
        await _audit(spec, call, enforced, "policy_matched", _rule_detail(enforced, args))
        raise _ask("rule", enforced.rule.reason or enforced.error or "the organisation's tool rule asks", enforced)
    acts, gated = _gates(ctx, call.tool_name)
    if enforced is not None:  # allow: the declared and confidence gates step aside, the untrusted one does not
        await _audit(spec, call, enforced, "policy_matched", _rule_detail(enforced, args))
        gated = acts and labels.untrusted
    mode = spec.tool_policy.review_mode
    if acts and mode == "approve_each":
        raise _ask("approve_each", "this chat asks a person before every acting call")
    if acts and mode == "judge":
        verdict = await _judge(ctx, call, args)
        if verdict.decision == "deny":
            await _audit(spec, call, None, "judge_denied", {"reason": verdict.reason, "args": args})
            raise ToolFailed(f"{JUDGE_DENIED}: {verdict.reason or 'it should not run'}.")
        if verdict.decision == "ask":
            raise _ask("judge", verdict.reason or "the reviewing model asks a person")
    if gated:
        raise ApprovalRequired()


def _facts(spec: RunSpec, call: ToolCallPart, args: dict[str, Any], labels: Labels) -> CallFacts:
    return CallFacts(
        tool=call.tool_name,
        args=args,
        user_role=spec.tool_policy.user_role,
        trigger=spec.trigger_source,
        tier=labels.content_tier,
        untrusted=labels.untrusted,
    )


def judge_index(messages: list[Any], tool_call_id: str) -> int:
    """The ledger's request index of the judge's review of one call (see `JUDGE_INDEX_BASE`)."""
    ids = [p.tool_call_id for m in messages if isinstance(m, ModelResponse) for p in m.tool_calls]
    position = ids.index(tool_call_id) if tool_call_id in ids else len(ids)
    return JUDGE_INDEX_BASE - position


def _conversation(messages: list[Any]) -> str:
    lines: list[str] = []
    for message in messages[-12:]:
        for part in message.parts:
            kind = getattr(part, "part_kind", "")
            if kind in ("user-prompt", "text", "tool-return"):
                who = {
                    "user-prompt": "User",
                    "text": "Assistant",
                    "tool-return": f"Tool {getattr(part, 'tool_name', '')}",
                }[kind]
                content = part.content if isinstance(part.content, str) else json.dumps(part.content, default=str)
                lines.append(f"{who}: {content[:2000]}")
    return "\n".join(lines)


def _rules_text(spec: RunSpec) -> str:
    return "\n".join(
        f"- {r.tool} when {r.when}: {r.effect}{f' ({r.reason})' if r.reason else ''}"
        for r in spec.tool_policy.rules
        if not r.log_only
    )


async def _judge(ctx: RunContext[RunDeps], call: ToolCallPart, args: dict[str, Any]) -> JudgeVerdict:
    """The judge's verdict (an `ask` when it cannot judge or the budget refuses its request); its usage is
    recorded like the router's."""
    spec = ctx.deps.spec
    if spec.router_model is None:
        return JudgeVerdict(decision="ask", reason="no reviewing model is configured for this run")
    index = judge_index(list(ctx.messages), call.tool_call_id)
    prompt = judge_prompt(_conversation(list(ctx.messages)), _rules_text(spec), call.tool_name, args)
    try:
        await reserve_request(spec, index, [ModelRequest.user_text_prompt(prompt)], (spec.router_model,))
    except BudgetExceeded:
        return JudgeVerdict(decision="ask", reason="the budget left no room for the reviewing model")
    verdict, response = await judge_call(spec, prompt)
    if response is not None:

        async def ledger() -> None:
            async with org_transaction(spec.org_id) as conn:
                await usage.record(conn, spec, index, response)

        await retrying(ledger, what="a usage record")  # idempotent: UNIQUE(run_id, request_index)
    return verdict or JudgeVerdict(decision="ask", reason="the reviewing model gave no verdict")


async def store_requirements(
    conn: Conn, spec: RunSpec, metadata: dict[str, dict[str, Any]], rows: list[PendingApproval]
) -> None:
    """Store with each approval just requested what asked for it (a rule's quorum and reason, the review mode, the
    judge) and when it escalates to the org's admins (in the pause's transaction)."""
    after = spec.tool_policy.escalation_seconds
    escalates = after is not None and after < spec.approval_timeout_seconds
    for row in rows:
        review = dict((metadata.get(row.tool_call_id) or {}).get("review") or {})
        if not row.inserted or not (review or escalates):
            continue
        at = datetime.now(UTC) + timedelta(seconds=after) if escalates and after is not None else None
        await review_store.require(conn, spec.org_id, row.id, int(review.get("quorum", 1)), at, review)
        if at is not None:
            await _schedule_escalation(spec, row.id, at)


async def _schedule_escalation(spec: RunSpec, approval_id: UUID, at: datetime) -> None:
    """On AWS, the approval's one-time escalation schedule; a refusal only logs (the run still waits, only the
    admins are not told on time)."""
    try:
        await asyncio.to_thread(escalation_schedule.put_schedule, spec.org_id, approval_id, at)
    except Exception:
        log.warning("an escalation schedule could not be created", extra={"run_id": str(spec.run_id)}, exc_info=True)
