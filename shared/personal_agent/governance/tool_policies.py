"""An org's tool rules for its admins: list, add at a place, change (a move included), delete, reorder; and the
snapshot a launch freezes into the RunSpec. A rule is checked before anything is written (422
`invalid_policy_rule` with the CEL error's line and column)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.errors import InvalidInput, NotFound
from personal_agent.governance import tool_policy_store as store
from personal_agent.governance.policy_rules import check_expression, check_tool
from personal_agent.spec.tool_policy import PolicyRule

MAX_RULES = 200


def _checked(values: dict[str, Any]) -> dict[str, Any]:
    """The API's fields as the store's columns, each checked (`when` parsed as CEL)."""
    out = {k: v for k, v in values.items() if k in store.EDITABLE}
    if "when" in values:
        out["when_expr"] = check_expression(str(values["when"]))
    if "tool" in out:
        check_tool(str(out["tool"]))
    if out.get("quorum", 1) == 2 and out.get("effect", "ask") != "ask":
        raise InvalidInput("`quorum: 2` only goes with `effect: ask`", code="invalid_policy_rule")
    return out


def _not_found() -> NotFound:
    return NotFound("tool policy not found", code="tool_policy_not_found")


async def list_policies(org_id: UUID) -> list[store.PolicyRow]:
    async with org_transaction(org_id) as conn:
        return await store.list_rules(conn)


async def create_policy(org_id: UUID, user_id: UUID, values: dict[str, Any], position: int | None) -> store.PolicyRow:
    """Add a rule at `position` (None or past the end: last)."""
    checked = _checked({"when": "true", "reason": "", "log_only": False, "quorum": 1, **values})
    async with org_transaction(org_id) as conn:
        await store.lock_rules(conn, org_id)
        count = len(await store.list_rules(conn))
        if count >= MAX_RULES:
            raise InvalidInput(f"an org has at most {MAX_RULES} tool rules", code="too_many_policies")
        at = count if position is None else min(position, count)
        return await store.insert_rule(conn, org_id, at, checked, user_id)


async def update_policy(org_id: UUID, rule_id: UUID, values: dict[str, Any], position: int | None) -> store.PolicyRow:
    """Change a rule's fields and, with `position`, move it there."""
    async with org_transaction(org_id) as conn:
        await store.lock_rules(conn, org_id)
        current = await store.get_rule(conn, rule_id)
        if current is None:
            raise _not_found()
        merged = {"effect": current.effect, "quorum": current.quorum, **values}
        checked = _checked(merged)
        row = await store.update_rule(conn, rule_id, checked) if checked else current
        if position is not None:
            await _move(conn, rule_id, position)
            row = await store.get_rule(conn, rule_id)
        assert row is not None
        return row


async def _move(conn: Conn, rule_id: UUID, position: int) -> None:
    ids = [r.id for r in await store.list_rules(conn) if r.id != rule_id]
    ids.insert(max(0, min(position, len(ids))), rule_id)
    await store.set_order(conn, ids)


async def reorder_policies(org_id: UUID, ordered: list[UUID]) -> list[store.PolicyRow]:
    """Put the org's rules in the order given (every rule, each once: 422 `invalid_policy_order` otherwise)."""
    async with org_transaction(org_id) as conn:
        await store.lock_rules(conn, org_id)
        current = {r.id for r in await store.list_rules(conn)}
        if len(ordered) != len(set(ordered)) or set(ordered) != current:
            raise InvalidInput("the order names every rule of the org once", code="invalid_policy_order")
        await store.set_order(conn, ordered)
        return await store.list_rules(conn)


async def delete_policy(org_id: UUID, rule_id: UUID) -> None:
    async with org_transaction(org_id) as conn:
        await store.lock_rules(conn, org_id)
        if not await store.delete_rule(conn, rule_id):
            raise _not_found()


async def snapshot(conn: Conn) -> tuple[PolicyRule, ...]:
    """The org's rules in order, as a launch freezes them into the RunSpec (in the launch's transaction)."""
    return tuple(
        PolicyRule(
            id=r.id,
            tool=r.tool,
            when=r.when_expr,
            effect=r.effect,  # the table's CHECK holds it to the three effects
            reason=r.reason,
            log_only=r.log_only,
            quorum=r.quorum,
        )
        for r in await store.list_rules(conn)
    )
