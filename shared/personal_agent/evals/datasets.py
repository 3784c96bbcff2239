"""Datasets: named lists of cases, given as a list or as JSONL (one `{input, expected?, criteria?, tags?}` a line),
or taken from a real conversation (the run's question as the input, its answer as the reference)."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any
from uuid import UUID

from personal_agent.chats import message_store
from personal_agent.db import org_transaction
from personal_agent.errors import Conflict, InvalidInput, NotFound
from personal_agent.evals import dataset_store as store
from personal_agent.evals.case_runs import answer_text
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle.run_views import visible_run

MAX_CASES = 1000


def parse_jsonl(text: str) -> list[dict[str, Any]]:
    """The cases of a JSONL text; 422 `invalid_jsonl` naming the first line that is not a JSON object."""
    cases = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise InvalidInput(f"line {number} is not JSON: {exc}", code="invalid_jsonl", line=number) from exc
        if not isinstance(value, dict):
            raise InvalidInput(f"line {number} is not a JSON object", code="invalid_jsonl", line=number)
        cases.append(value)
    return cases


def _case(raw: dict[str, Any], index: int) -> store.NewCase:
    text = raw.get("input")
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput(f"case {index + 1} needs a non-empty `input`", code="invalid_case", case=index + 1)
    tags = raw.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise InvalidInput(f"case {index + 1}: `tags` is a list of strings", code="invalid_case", case=index + 1)
    expected, criteria = raw.get("expected"), raw.get("criteria")
    for field, value in (("expected", expected), ("criteria", criteria)):
        if value is not None and not isinstance(value, str):
            raise InvalidInput(f"case {index + 1}: `{field}` is a string", code="invalid_case", case=index + 1)
    return store.NewCase(text, expected, criteria, tuple(tags))


async def create(principal: Principal, name: str, raw_cases: list[dict[str, Any]]) -> dict[str, Any]:
    """A new dataset of the org; 409 `dataset_exists` for a name the org has."""
    if len(raw_cases) > MAX_CASES:
        raise InvalidInput(f"a dataset has at most {MAX_CASES} cases", code="too_many_cases")
    cases = [_case(raw, i) for i, raw in enumerate(raw_cases)]
    async with org_transaction(principal.org_id) as conn:
        dataset_id = await store.insert_dataset(conn, principal.org_id, name.strip(), principal.user_id)
        if dataset_id is None:
            raise Conflict(f"the org has a dataset named {name!r}", code="dataset_exists")
        await store.add_cases(conn, principal.org_id, dataset_id, cases)
        row = await store.get_dataset(conn, dataset_id)
    assert row is not None
    return asdict(row)


async def listed(principal: Principal) -> list[dict[str, Any]]:
    async with org_transaction(principal.org_id) as conn:
        return [asdict(row) for row in await store.list_datasets(conn)]


async def detail(principal: Principal, dataset_id: UUID) -> dict[str, Any]:
    async with org_transaction(principal.org_id) as conn:
        row = await store.get_dataset(conn, dataset_id)
        if row is None:
            raise NotFound("dataset not found", code="dataset_not_found")
        cases = await store.cases(conn, dataset_id)
    return {**asdict(row), "items": [asdict(case) for case in cases]}


async def add_from_run(principal: Principal, dataset_id: UUID, run_id: UUID) -> dict[str, Any]:
    """Append the run's question as a case, its answer the reference; 404 for a run the caller cannot see."""
    await visible_run(principal, run_id)
    async with org_transaction(principal.org_id) as conn:
        if await store.get_dataset(conn, dataset_id) is None:
            raise NotFound("dataset not found", code="dataset_not_found")
        messages = await message_store.run_messages(conn, run_id)
        question = question_of(messages)
        if not question:
            raise InvalidInput("the run has no question of a person to take", code="run_without_question")
        case = store.NewCase(question, answer_text(messages) or None, source_run_id=run_id)
        await store.add_cases(conn, principal.org_id, dataset_id, [case])
        row = await store.get_dataset(conn, dataset_id)
    assert row is not None
    return asdict(row)


def question_of(messages: list[Any]) -> str:
    """The first question of a person among a run's stored messages."""
    for message in messages:
        for part in message.get("parts", []) if isinstance(message, dict) else []:
            if part.get("part_kind") == "user-prompt":
                content = part.get("content")
                return content if isinstance(content, str) else " ".join(str(c) for c in content if isinstance(c, str))
    return ""
