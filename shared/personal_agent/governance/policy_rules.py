"""Tool rules over a call's arguments: check a rule when an admin saves it (422 with the error's line and column),
and decide a call by the run's snapshotted rules, first match wins.

Expressions are CEL (`cel-python`, parsed and interpreted, never `eval`) over `args` (the call's validated
arguments), `user.role`, `run.trigger`, `run.tier` and `run.untrusted`. A rule whose expression fails on a call
(an argument it reads is missing, a type mismatch) fails closed: an `ask` or `deny` rule then asks a person
(it is not enforced as a deny on a guess, and the call does not slip through), an `allow` rule does not match.
Log-only rules never decide; the ones that match before the deciding rule are reported as what would have
happened.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from personal_agent.errors import InvalidInput
from personal_agent.spec.tool_policy import PolicyRule

Effect = Literal["allow", "ask", "deny"]
VARIABLES = frozenset({"args", "user", "run"})
_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
_TOOL_PATTERN = re.compile(r"^[A-Za-z0-9_.\-*?\[\]]{1,200}$")
MAX_EXPRESSION_CHARS = 2000


@dataclass(frozen=True)
class CallFacts:
    """What a rule may read of one call."""

    tool: str
    args: dict[str, Any]
    user_role: str
    trigger: str
    tier: int
    untrusted: bool

    def activation(self) -> dict[str, Any]:
        from celpy.adapter import json_to_cel

        return {
            "args": json_to_cel(self.args),
            "user": json_to_cel({"role": self.user_role}),
            "run": json_to_cel({"trigger": self.trigger, "tier": self.tier, "untrusted": self.untrusted}),
        }


@dataclass(frozen=True)
class RuleMatch:
    """A rule that matched a call, the effect it has (or would have: log-only), and the evaluation error that
    made a failing `ask`/`deny` rule ask a person."""

    rule: PolicyRule
    effect: Effect
    error: str | None = None


def _problem(message: str, line: int | None = None, column: int | None = None) -> InvalidInput:
    where = f" (line {line}, column {column})" if line is not None else ""
    return InvalidInput(f"{message}{where}", code="invalid_policy_rule", line=line, column=column)


def check_tool(tool: str) -> str:
    """A tool name or glob (letters, digits, `_ . -` and `* ? [ ]`)."""
    if not _TOOL_PATTERN.match(tool):
        raise _problem("`tool` is a tool's name or a glob of names (letters, digits, _ . - and * ? [ ])")
    return tool


def check_expression(expression: str) -> str:
    """Parse `expression` as CEL and check it reads only `args`, `user` and `run` (422 with its position)."""
    import celpy
    from celpy.celparser import CELParseError

    if not expression.strip() or len(expression) > MAX_EXPRESSION_CHARS:
        raise _problem(f"`when` is a CEL expression of 1 to {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = celpy.Environment().compile(expression)
    except CELParseError as exc:
        first = str(exc.args[0]).splitlines()[0] if exc.args else ""
        raise _problem(f"`when` is not valid CEL near {first.strip()!r}", exc.line, exc.column) from None
    bound = {_first_ident(t) for t in tree.iter_subtrees() if t.data == "member_dot_arg" and _macro(t)}
    for node in tree.iter_subtrees():
        if node.data == "ident" and (name := str(node.children[0])) not in VARIABLES | bound:
            line, column = (node.meta.line, node.meta.column) if not node.meta.empty else (None, None)
            raise _problem(f"`when` reads {name!r}; a rule reads only args, user.role and run.*", line, column)
    return expression


def _macro(node: Any) -> bool:
    return len(node.children) > 1 and str(node.children[1]) in _MACROS


def _first_ident(node: Any) -> str | None:
    """The variable a macro binds (`v` of `list.exists(v, ...)`)."""
    if len(node.children) < 3:
        return None
    for sub in node.children[2].iter_subtrees_topdown():
        if sub.data == "ident":
            return str(sub.children[0])
    return None


@functools.lru_cache(maxsize=512)
def _program(expression: str) -> Any:
    import celpy

    env = celpy.Environment()
    return env.program(env.compile(expression))


def _holds(rule: PolicyRule, facts: CallFacts) -> tuple[bool, str | None]:
    """Whether the rule's expression is true for the call; (False, why) when it could not be evaluated."""
    from celpy.celtypes import BoolType

    try:
        value = _program(rule.when).evaluate(facts.activation())
    except Exception as exc:  # celpy raises CELEvalError, and its own bugs surface as plain errors: fail closed
        return False, str(exc.args[0] if exc.args else exc)[:200]
    if not isinstance(value, BoolType | bool):
        return False, f"the expression gave {type(value).__name__}, not a boolean"
    return bool(value), None


def _match(rule: PolicyRule, facts: CallFacts) -> RuleMatch | None:
    if not fnmatch.fnmatchcase(facts.tool, rule.tool):
        return None
    holds, error = _holds(rule, facts)
    if error is not None:
        return RuleMatch(rule, "ask", error) if rule.effect != "allow" else None
    return RuleMatch(rule, rule.effect) if holds else None


def decide(rules: Sequence[PolicyRule], facts: CallFacts) -> tuple[RuleMatch | None, list[RuleMatch]]:
    """The first enforced rule that matches the call (None: no rule decides), and the log-only rules that matched
    before it (what they would have done)."""
    would: list[RuleMatch] = []
    for rule in rules:
        found = _match(rule, facts)
        if found is None:
            continue
        if not rule.log_only:
            return found, would
        would.append(found)
    return None, would
