"""The evaluation scorers and reports as pure functions: each scorer's score, a bad scorer refused with a stable
code, the judge's verdict parsed, the report's Markdown."""

from __future__ import annotations

import argparse
import re

import pytest

from personal_agent.errors import InvalidInput
from personal_agent.evals import scorers
from personal_agent.evals.command import scorer_arg

SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@pytest.mark.parametrize(
    ("scorer", "answer", "expected", "score"),
    [
        ({"kind": "exact"}, " Paris ", "Paris", 1.0),
        ({"kind": "exact"}, "Paris.", "Paris", 0.0),
        ({"kind": "contains"}, "It is PARIS.", "paris", 1.0),
        ({"kind": "contains"}, "Lyon", "Paris", 0.0),
        ({"kind": "contains"}, "anything", None, None),
        ({"kind": "regex", "pattern": r"\b\d{4}\b"}, "in 1999", None, 1.0),
        ({"kind": "regex"}, "abc", "^a.c$", 1.0),
        ({"kind": "json_schema", "schema": SCHEMA}, '```json\n{"ok": true}\n```', None, 1.0),
        ({"kind": "json_schema", "schema": SCHEMA}, '{"ok": "yes"}', None, 0.0),
        ({"kind": "json_schema", "schema": SCHEMA}, "not json", None, 0.0),
    ],
)
def test_each_scorer_scores_the_answer(scorer: dict, answer: str, expected: str | None, score: float | None) -> None:
    assert scorers.score(scorer, scorers.Answered(answer), expected) == score


def test_tool_called_latency_and_cost_read_what_the_run_did() -> None:
    answered = scorers.Answered("42", (("calculate", {"expression": "6*7", "precision": 2}),), 900, 0.002)
    assert (
        scorers.score({"kind": "tool_called", "tool": "calculate", "args": {"expression": "6*7"}}, answered, None) == 1
    )
    assert scorers.score({"kind": "tool_called", "tool": "calculate", "args": {"expression": "1"}}, answered, None) == 0
    assert scorers.score({"kind": "tool_called", "tool": "web_search"}, answered, None) == 0
    assert scorers.score({"kind": "latency", "max_ms": 1000}, answered, None) == 1
    assert scorers.score({"kind": "cost", "max_usd": 0.001}, answered, None) == 0


MANUAL = {"citation": "manual.md § Valve", "document": "manual.md", "text": "Recalibrate the valve every 90 days."}
NOTES = {"citation": "notes.md § Misc", "document": "notes.md", "text": "The valve is blue."}


@pytest.mark.parametrize(
    ("scorer", "answer", "passages", "score"),
    [
        ({"document": "manual.md"}, "Every 90 days [2].", (NOTES, MANUAL), 1.0),  # its footnote number
        ({"document": "manual.md"}, "Every 90 days [1].", (NOTES, MANUAL), 0.0),  # another passage's number
        ({"document": "MANUAL.md", "text": "90 days"}, "Every 90 days (manual.md).", (MANUAL,), 1.0),  # by name
        ({"document": "manual.md", "text": "blue"}, "Blue [1].", (MANUAL,), 0.0),  # the passage lacks the phrase
        ({"document": "manual.md"}, "Every 90 days, trust me.", (MANUAL,), 0.0),  # retrieved, not cited
        ({"document": "manual.md"}, "Every 90 days (manual.md).", (), 0.0),  # named, never retrieved
    ],
)
def test_passage_cited_needs_the_passage_retrieved_and_cited(
    scorer: dict, answer: str, passages: tuple, score: float
) -> None:
    cited = {"kind": "passage_cited", **scorer}
    assert scorers.validate([cited]) == [cited]
    assert scorers.score(cited, scorers.Answered(answer, passages=passages), None) == score


@pytest.mark.parametrize(
    "bad",
    [
        [],
        [{"kind": "vibes"}],
        [{"kind": "regex", "pattern": "("}],
        [{"kind": "json_schema", "schema": {"type": 3}}],
        [{"kind": "tool_called"}],
        [{"kind": "latency", "max_ms": -1}],
        [{"kind": "cost"}],
        [{"kind": "passage_cited"}],
        [{"kind": "passage_cited", "document": "a.md", "text": 3}],
    ],
)
def test_a_bad_scorer_is_refused_with_a_stable_code(bad: list[dict]) -> None:
    with pytest.raises(InvalidInput) as refused:
        scorers.validate(bad)
    assert refused.value.code == "invalid_scorer"


def test_the_judge_verdict_is_its_first_score_out_of_ten() -> None:
    assert scorers.verdict("SCORE: 7 because") == 0.7
    assert scorers.verdict("score:10") == 1.0 and scorers.verdict("SCORE: 42") == 1.0
    assert scorers.verdict("no verdict") == 0.0


@pytest.mark.parametrize(
    ("given", "scorer"),
    [
        ("contains", {"kind": "contains"}),
        ('regex:{"pattern": "^4\\\\d$"}', {"kind": "regex", "pattern": "^4\\d$"}),
        (
            'tool_called:{"tool": "calculate", "arguments": {"expression": "6*7"}}',
            {"kind": "tool_called", "tool": "calculate", "args": {"expression": "6*7"}},
        ),
        ('cost:{"max_usd": 0.01}', {"kind": "cost", "max_usd": 0.01}),
        ('judge:{"rubric": "polite"}', {"kind": "judge", "rubric": "polite"}),
    ],
)
def test_cli_scorer_is_the_apis_scorer_object(given: str, scorer: dict[str, object]) -> None:
    assert scorer_arg(given) == scorer


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("vibes", "unknown scorer 'vibes'"),
        ("latency", "positive `max_ms`"),
        ('regex:{"pattern": "("}', "does not compile"),
        ("regex:{nope", "does not parse"),
        ('regex:["x"]', "must be an object"),
        ('regex:{"patern": "x"}', "unknown field(s) patern"),
        ('json_schema:{"schema": {"type": "nope"}}', "schema is invalid"),
    ],
)
def test_cli_refuses_a_bad_scorer(given: str, said: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(said)):
        scorer_arg(given)
