"""The form of an `ask_user` question and the answers it accepts: free text, one of a list of `choices`, or a value
of a small JSON Schema. The model's form is checked when it asks (a bad form is the model's to fix); a person's
answer is checked against it before anything is stored (`AnswerMismatch` -> 422 `answer_invalid`).

Pure functions over JSON values: the tool, the engine and the API all use them. A schema is the small subset
`approvals/small_schema.py` checks (the API function has no JSON Schema library)."""

from __future__ import annotations

import json
from typing import Any

from personal_agent.approvals import small_schema

MAX_QUESTION_CHARS = 2000
MAX_CHOICES = 20
MAX_CHOICE_CHARS = 200
MAX_SCHEMA_BYTES = 8 * 1024
MAX_ANSWER_BYTES = 16 * 1024
SCHEMA_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})


class InvalidForm(ValueError):
    """The question or its form cannot be asked as given (the model can fix it)."""


class AnswerMismatch(ValueError):
    """The answer does not fit the question's form."""


def build_form(
    question: str, choices: list[str] | None = None, schema: dict[str, Any] | None = None, default: Any = None
) -> dict[str, Any]:
    """The question's form as stored and shown: `{question, choices?, schema?, default?}` (InvalidForm otherwise)."""
    question = question.strip()
    if not question:
        raise InvalidForm("`question` is empty: say what you need to know")
    if len(question) > MAX_QUESTION_CHARS:
        raise InvalidForm(f"`question` is longer than {MAX_QUESTION_CHARS} characters")
    if choices is not None and schema is not None:
        raise InvalidForm("give `choices` or `schema`, not both")
    form: dict[str, Any] = {"question": question}
    if choices is not None:
        form["choices"] = _choices(choices)
    if schema is not None:
        form["schema"] = _schema(schema)
    if default is not None:
        try:
            form["default"] = check_answer(form, default)
        except AnswerMismatch as exc:
            raise InvalidForm(f"`default` does not fit the form: {exc}") from exc
    return form


def _choices(choices: list[str]) -> list[str]:
    cleaned = [c.strip() for c in choices if isinstance(c, str)]
    if not cleaned or len(cleaned) != len(choices) or any(not c for c in cleaned):
        raise InvalidForm("`choices` must be a non-empty list of non-empty strings")
    if len(cleaned) > MAX_CHOICES or any(len(c) > MAX_CHOICE_CHARS for c in cleaned):
        raise InvalidForm(f"at most {MAX_CHOICES} choices of at most {MAX_CHOICE_CHARS} characters each")
    if len(set(cleaned)) != len(cleaned):
        raise InvalidForm("`choices` has the same choice twice")
    return cleaned


def _schema(schema: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(schema, dict) or len(json.dumps(schema)) > MAX_SCHEMA_BYTES:
        raise InvalidForm(f"`schema` must be a JSON Schema object of at most {MAX_SCHEMA_BYTES} bytes")
    if schema.get("type") not in SCHEMA_TYPES:
        raise InvalidForm(f"`schema.type` must be one of {sorted(SCHEMA_TYPES)}")
    problem = small_schema.schema_problem(schema)
    if problem:
        raise InvalidForm(problem)
    return schema


def check_answer(form: dict[str, Any], answer: Any) -> Any:
    """The answer as stored (text stripped), or AnswerMismatch saying what does not fit."""
    if len(json.dumps(answer, ensure_ascii=False).encode()) > MAX_ANSWER_BYTES:
        raise AnswerMismatch(f"the answer is larger than {MAX_ANSWER_BYTES} bytes")
    if "choices" in form:
        if not isinstance(answer, str) or answer.strip() not in form["choices"]:
            raise AnswerMismatch(f"the answer must be one of {form['choices']}")
        return answer.strip()
    if "schema" in form:
        error = small_schema.first_error(form["schema"], answer)
        if error:
            raise AnswerMismatch(error)
        return answer
    if not isinstance(answer, str) or not answer.strip():
        raise AnswerMismatch("the answer must be non-empty text")
    return answer.strip()
