"""Tool rules' CEL (issue 33 item 3): checked at save with the error's position, first match wins, log-only rules
report what they would have done, and a rule that fails on a call fails closed (ask, never a silent allow)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from personal_agent.errors import InvalidInput
from personal_agent.governance.policy_rules import CallFacts, check_expression, check_tool, decide
from personal_agent.spec.tool_policy import PolicyRule


def rule(tool: str, when: str, effect: Any, **more: Any) -> PolicyRule:
    return PolicyRule(id=uuid.uuid4(), tool=tool, when=when, effect=effect, **more)


def call(args: dict[str, Any], tool: str = "refund_payment", **run: Any) -> CallFacts:
    facts = {"user_role": "user", "trigger": "chat", "tier": 0, "untrusted": False, **run}
    return CallFacts(tool=tool, args=args, **facts)


REFUNDS = [rule("refund_*", "args.amount > 500", "ask"), rule("refund_*", "args.amount <= 500", "allow")]


@pytest.mark.parametrize(("amount", "effect"), [(501, "ask"), (500, "allow"), (0, "allow"), (10_000, "ask")])
def test_the_first_matching_rule_decides(amount: int, effect: str) -> None:
    found, would = decide(REFUNDS, call({"amount": amount}))
    assert found is not None and found.effect == effect and would == []


def test_no_rule_for_the_tool_decides_nothing() -> None:
    assert decide(REFUNDS, call({"amount": 900}, tool="send_email")) == (None, [])


def test_rules_read_the_callers_role_and_the_runs_trigger_tier_and_taint() -> None:
    rules = [rule("*", 'run.trigger == "webhook" && run.untrusted && user.role != "admin" && run.tier >= 1', "deny")]
    assert decide(rules, call({}, trigger="webhook", untrusted=True, tier=1))[0] is not None
    assert decide(rules, call({}, trigger="webhook", untrusted=True, tier=1, user_role="admin"))[0] is None
    assert decide(rules, call({}, trigger="chat", untrusted=True, tier=1))[0] is None


def test_log_only_rules_before_the_deciding_one_are_reported_not_enforced() -> None:
    trial = rule("refund_*", "args.amount > 100", "deny", log_only=True)
    later = rule("refund_*", "true", "deny", log_only=True)
    found, would = decide([trial, *REFUNDS, later], call({"amount": 300}))
    assert found is not None and found.effect == "allow"
    assert [(m.rule, m.effect) for m in would] == [(trial, "deny")]  # `later` comes after the decision


def test_a_rule_that_fails_on_a_call_asks_and_an_allow_that_fails_does_not_match() -> None:
    found, _ = decide(REFUNDS, call({"order": "A-1"}))  # no amount: both rules fail to evaluate
    assert found is not None and found.effect == "ask" and "amount" in (found.error or "")
    assert decide([rule("refund_*", "args.amount <= 500", "allow")], call({}))[0] is None
    deny = decide([rule("refund_*", 'args.amount + "x" == 1', "deny")], call({"amount": 1}))[0]
    assert deny is not None and deny.effect == "ask"  # a failing deny asks a person: no deny on a guess, no slip


def test_a_non_boolean_expression_fails_closed() -> None:
    found = decide([rule("refund_*", "args.amount", "deny")], call({"amount": 3}))[0]
    assert found is not None and found.effect == "ask" and "boolean" in (found.error or "")


@pytest.mark.parametrize(
    ("expression", "position"),
    [("args.amount > 500 &&", (1, 19)), ("args.amount >> 2", (1, 14)), ("leak.all == 1", (1, 1))],
)
def test_a_bad_expression_is_refused_with_its_position(expression: str, position: tuple[int, int]) -> None:
    with pytest.raises(InvalidInput) as refused:
        check_expression(expression)
    assert refused.value.code == "invalid_policy_rule"
    assert (refused.value.details["line"], refused.value.details["column"]) == position


def test_macros_may_bind_their_own_variable() -> None:
    assert check_expression('args.items.exists(i, i.sku == "X") && size(args.to) < 5')


@pytest.mark.parametrize("tool", ["", "rm -rf", "a" * 201, "send;drop"])
def test_a_tool_pattern_is_a_name_or_a_glob(tool: str) -> None:
    with pytest.raises(InvalidInput):
        check_tool(tool)
    assert check_tool("mcp_server_*") == "mcp_server_*"
