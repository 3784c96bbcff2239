"""An `ask_user` question's form and the answers it takes (`approvals/question_forms.py`, `approvals/small_schema.py`):
a form the model cannot ask is refused with what to fix, an answer that does not fit says where and why."""

from __future__ import annotations

import re
from typing import Any

import pytest

from personal_agent.approvals.question_forms import AnswerMismatch, InvalidForm, build_form, check_answer

SCHEMA = {
    "type": "object",
    "required": ["amount"],
    "additionalProperties": False,
    "properties": {
        "amount": {"type": "integer", "minimum": 1},
        "currency": {"type": "string", "enum": ["EUR", "USD"]},
        "tags": {"type": "array", "maxItems": 2, "items": {"type": "string", "minLength": 2}},
    },
}


@pytest.mark.parametrize(
    ("form", "why"),
    [
        ({"question": " "}, "`question` is empty"),
        ({"question": "q", "choices": ["a"], "schema": {"type": "string"}}, "not both"),
        ({"question": "q", "choices": ["a", "a"]}, "the same choice twice"),
        ({"question": "q", "choices": []}, "non-empty list"),
        ({"question": "q", "schema": {"type": "object", "$ref": "#/x"}}, "'$ref'"),
        ({"question": "q", "schema": {"type": "string", "pattern": "(a+)+$"}}, "'pattern'"),
        ({"question": "q", "schema": {"type": "thing"}}, "`schema.type` must be one of"),
        ({"question": "q", "choices": ["a", "b"], "default": "c"}, "`default` does not fit"),
    ],
)
def test_a_form_the_model_cannot_ask_says_what_to_fix(form: dict[str, Any], why: str) -> None:
    with pytest.raises(InvalidForm, match=re.escape(why)):
        build_form(**form)


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ({"amount": 0}, "amount must be within minimum 1"),
        ({"currency": "EUR"}, "the answer is missing 'amount'"),
        ({"amount": 2, "currency": "GBP"}, "currency must be one of ['EUR', 'USD']"),
        ({"amount": 2, "tags": ["a"]}, "tags/0 must be within minLength 2"),
        ({"amount": 2, "tags": ["ab", "cd", "ef"]}, "tags must be within maxItems 2"),
        ({"amount": 2, "note": "hi"}, "the answer has 'note', which the form does not ask for"),
        ({"amount": True}, "amount must be integer"),
        ("250", "the answer must be object"),
    ],
)
def test_an_answer_that_does_not_fit_the_schema_says_where(answer: Any, why: str) -> None:
    with pytest.raises(AnswerMismatch) as refused:
        check_answer(build_form("How much?", schema=SCHEMA), answer)
    assert str(refused.value) == why


def test_answers_that_fit_are_kept_as_given_and_text_is_stripped() -> None:
    fits = {"amount": 250, "currency": "EUR", "tags": ["ab"]}
    assert check_answer(build_form("How much?", schema=SCHEMA), fits) == fits
    assert check_answer(build_form("Which?", ["staging", "production"]), " production ") == "production"
    assert check_answer(build_form("Why?"), "  because  ") == "because"
    with pytest.raises(AnswerMismatch, match="one of"):
        check_answer(build_form("Which?", ["staging", "production"]), "moon")
    with pytest.raises(AnswerMismatch, match="non-empty text"):
        check_answer(build_form("Why?"), {"not": "text"})
    assert build_form("Which?", ["a", "b"], default="b")["default"] == "b"
