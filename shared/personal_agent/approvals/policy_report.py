"""What the org's tool rules did over a period, from the approval audit: per rule, how many calls it denied, asked
about or allowed, and — for a log-only rule — what it would have done, with the rule as it stands now (a rule
deleted since is reported by its id only)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from personal_agent.approvals import review_store
from personal_agent.db import org_transaction
from personal_agent.errors import InvalidInput
from personal_agent.governance import tool_policy_store

DEFAULT_DAYS = 7
MAX_DAYS = 366
ACTIONS = {
    "policy_log": "would_have",
    "policy_denied": "enforced",
    "policy_matched": "enforced",
    "review_asked": "asked",
}


def period(since: datetime | None, until: datetime | None) -> tuple[datetime, datetime]:
    """The period asked for (default: the last 7 days), at most a year (422 `invalid_period`)."""
    end = until or datetime.now(UTC)
    start = since or end - timedelta(days=DEFAULT_DAYS)
    if start >= end or end - start > timedelta(days=MAX_DAYS):
        raise InvalidInput(f"`since` comes before `until`, at most {MAX_DAYS} days apart", code="invalid_period")
    return start, end


async def report(org_id: UUID, since: datetime | None, until: datetime | None) -> dict[str, Any]:
    start, end = period(since, until)
    async with org_transaction(org_id) as conn:
        counts = await review_store.policy_matches(conn, start, end)
        rules = {r.id: r for r in await tool_policy_store.list_rules(conn)}
    items: dict[UUID, dict[str, Any]] = {}
    for c in counts:
        rule = rules.get(c.rule_id)
        item = items.setdefault(
            c.rule_id,
            {
                "rule_id": c.rule_id,
                "tool": rule.tool if rule else None,
                "when": rule.when_expr if rule else None,
                "effect": rule.effect if rule else None,
                "log_only": rule.log_only if rule else None,
                "would_have": {},
                "enforced": {},
                "asked": 0,
                "last_at": c.last_at,
            },
        )
        kind = ACTIONS.get(c.action)
        if kind == "asked":
            item["asked"] += c.count
        elif kind is not None:
            effect = c.effect or "ask"
            item[kind][effect] = item[kind].get(effect, 0) + c.count
        item["last_at"] = max(item["last_at"], c.last_at)
    return {"since": start, "until": end, "items": list(items.values())}
