"""How deep a webhook's JSON nests, counted without parsing it (the parser itself would recurse)."""

from __future__ import annotations

import json

import pytest

from personal_agent.errors import InvalidInput
from personal_agent.workflows.prompts import TriggerValues, render
from personal_agent.workflows.webhooks import MAX_JSON_DEPTH, check_depth, json_depth


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("{}", 1),
        ('{"a": [1, {"b": 2}], "c": {}}', 3),
        (r'{"brackets in strings": "[[[{{{", "escaped quote": "\"[[[\""}', 1),
        ("plain text", 0),
        ("[" * 5000 + "]" * 5000, 5000),
    ],
)
def test_json_depth_counts_nesting_and_skips_strings(text: str, depth: int) -> None:
    assert json_depth(text) == depth


def test_json_depth_agrees_with_the_parser_on_escaped_quotes() -> None:
    text = json.dumps({"a": 'say "[" then \\\\', "b": [[["x"]]]})
    assert json_depth(text) == 4


def test_only_json_deeper_than_the_limit_is_refused() -> None:
    check_depth("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH)
    check_depth("a text body may say " + "[" * 100)  # not JSON: the template never parses it
    with pytest.raises(InvalidInput) as refused:
        check_depth("  " + "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1))
    assert refused.value.code == "body_too_deep"


def test_a_template_field_of_a_body_too_deep_to_parse_renders_empty() -> None:
    values = TriggerValues(trigger="webhook", time="t", workflow_name="w", body="[" * 5000 + "]" * 5000)
    assert render("Build {{body.0}}", values) == "Build"
