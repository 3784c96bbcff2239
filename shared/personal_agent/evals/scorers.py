"""Scorers: each turns a case's answer into a score from 0 to 1. `exact`, `contains`, `regex`, `json_schema`,
`tool_called`, `passage_cited`, `latency` and `cost` are pure; `judge` (an LLM with a rubric) is scored by
`evals.progress` with a metered run."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from personal_agent.errors import InvalidInput

KINDS = ("exact", "contains", "regex", "json_schema", "tool_called", "passage_cited", "latency", "cost", "judge")
MAX_SCORERS = 8


def validate(scorers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scorers as given, checked: a known `kind`, a compilable `pattern` for `regex`, a valid `schema` for
    `json_schema`. 422 `invalid_scorer` otherwise."""
    if not scorers or len(scorers) > MAX_SCORERS:
        raise InvalidInput(f"give 1 to {MAX_SCORERS} scorers", code="invalid_scorer")
    for scorer in scorers:
        kind = scorer.get("kind")
        if kind not in KINDS:
            raise InvalidInput(f"unknown scorer {kind!r}; one of {', '.join(KINDS)}", code="invalid_scorer")
        if kind == "regex" and scorer.get("pattern") is not None:
            try:
                re.compile(str(scorer["pattern"]))
            except re.error as exc:
                raise InvalidInput(
                    f"the regex scorer's pattern does not compile: {exc}", code="invalid_scorer"
                ) from exc
        if kind == "json_schema":
            _check_schema(scorer.get("schema"))
        _check_fields(scorer)
    return scorers


def _check_fields(scorer: dict[str, Any]) -> None:
    kind = scorer["kind"]
    if kind == "tool_called" and (
        not isinstance(scorer.get("tool"), str) or not isinstance(scorer.get("args", {}), dict)
    ):
        raise InvalidInput("the tool_called scorer needs a `tool` name (and `args`, an object)", code="invalid_scorer")
    if kind == "passage_cited" and not (isinstance(scorer.get("document"), str) and scorer["document"].strip()):
        raise InvalidInput("the passage_cited scorer needs a `document` (its file name)", code="invalid_scorer")
    if kind == "passage_cited" and not isinstance(scorer.get("text", ""), str):
        raise InvalidInput("the passage_cited scorer's `text` is a phrase the passage holds", code="invalid_scorer")
    limit = {"latency": "max_ms", "cost": "max_usd"}.get(kind)
    if limit and not (isinstance(scorer.get(limit), int | float) and scorer[limit] > 0):
        raise InvalidInput(f"the {kind} scorer needs a positive `{limit}`", code="invalid_scorer")


def _check_schema(schema: Any) -> None:
    from jsonschema import Draft202012Validator, SchemaError  # type: ignore[import-untyped]

    if not isinstance(schema, dict):
        raise InvalidInput("the json_schema scorer needs a `schema` object", code="invalid_scorer")
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise InvalidInput(f"the json_schema scorer's schema is invalid: {exc.message}", code="invalid_scorer") from exc


@dataclass(frozen=True)
class Answered:
    """What a case's run gave: its answer's text, the tool calls it made (name, arguments), its latency and cost, and
    the distinct passages its knowledge searches returned, in order (`knowledge.cited.retrieved`)."""

    text: str
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    latency_ms: int = 0
    cost_usd: float = 0.0
    passages: tuple[dict[str, Any], ...] = ()


def score(scorer: dict[str, Any], answered: Answered, expected: str | None) -> float | None:
    """One pure scorer's score; None when the case has nothing for it to compare (no expected answer)."""
    kind, answer = scorer["kind"], answered.text
    if kind == "tool_called":
        wanted = scorer.get("args") or {}
        calls = answered.tool_calls
        return float(any(n == scorer["tool"] and wanted.items() <= args.items() for n, args in calls))
    if kind == "passage_cited":
        return _cited(scorer, answered)
    if kind == "latency":
        return float(answered.latency_ms <= scorer["max_ms"])
    if kind == "cost":
        return float(answered.cost_usd <= scorer["max_usd"])
    if kind == "json_schema":
        return _json_valid(answer, scorer["schema"])
    if kind == "regex":
        pattern = scorer.get("pattern") or expected
        return None if pattern is None else float(re.search(str(pattern), answer) is not None)
    if expected is None:
        return None
    if kind == "exact":
        return float(answer.strip() == expected.strip())
    if kind == "contains":
        return float(expected.strip().casefold() in answer.casefold())
    raise ValueError(kind)


def _cited(scorer: dict[str, Any], answered: Answered) -> float:
    """1 when the run retrieved a passage of `document` (holding `text`, when given) and the answer cites it: by its
    footnote number `[n]` (its place among the run's passages, as the web chat numbers them), its citation or the
    document's name."""
    document, phrase = scorer["document"].strip().casefold(), str(scorer.get("text") or "").casefold()
    for number, passage in enumerate(answered.passages, 1):
        held = str(passage.get("text", "")).casefold()
        if str(passage.get("document", "")).casefold() != document or phrase not in held:
            continue
        marks = (f"[{number}]", str(passage["citation"]).casefold(), document)
        if any(mark in answered.text.casefold() for mark in marks):
            return 1.0
    return 0.0


def _json_valid(answer: str, schema: dict[str, Any]) -> float:
    from jsonschema import Draft202012Validator

    text = answer.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    try:
        value = json.loads(text)
    except ValueError:
        return 0.0
    return float(not any(True for _ in Draft202012Validator(schema).iter_errors(value)))


def verdict(text: str) -> float:
    """The judge's score from its answer: the first `SCORE: n` with n from 0 to 10, as 0 to 1 (0 when none)."""
    found = re.search(r"SCORE:\s*(\d+(?:\.\d+)?)", text, re.IGNORECASE)
    return min(max(float(found.group(1)) / 10, 0.0), 1.0) if found else 0.0
