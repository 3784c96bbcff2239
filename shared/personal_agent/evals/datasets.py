"""Datasets: named lists of cases, given as a list or as JSONL (one `{input, expected?, criteria?, tags?}` a line),
or taken from a real conversation (the run's question as the input, its answer as the reference, the files it was
sent with as the case's files); a case is added, changed and deleted one by one, and a dataset deleted whole with
its cases' files (`evals/case_files.py`)."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any
from uuid import UUID

from personal_agent.attachments import store as attachment_store
from personal_agent.chats import message_store
from personal_agent.chats import store as chat_store
from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.errors import Conflict, InvalidInput, NotFound
from personal_agent.evals import case_file_store, case_files, case_store
from personal_agent.evals import dataset_store as store
from personal_agent.evals.case_runs import answer_text
from personal_agent.governance.tiers import classification_tier
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle.run_views import visible_run
from personal_agent.runs.store import RunRow
from personal_agent.spec.labels import Labels, run_labels
from personal_agent.spec.run_spec import RunSpec

MAX_CASES = 1000
MAX_TURNS = 50
MAX_INPUT = 100_000
HISTORY = 20
"""A case from a real run keeps at most this many of the conversation's messages before the run's question."""


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


def _input(value: Any, index: int) -> store.Input:
    """A case's input: a non-empty string, or 1 to MAX_TURNS messages `{role: user|assistant, content}` ending with
    a user's (the earlier ones the case run's history, the last its prompt); 422 `invalid_case` otherwise."""
    if isinstance(value, str) and value.strip() and len(value) <= MAX_INPUT:
        return value
    if isinstance(value, list) and 0 < len(value) <= MAX_TURNS and store.encoded_size(value) <= MAX_INPUT:
        turns = [m for m in value if isinstance(m, dict)]
        if len(turns) == len(value) and all(
            m.get("role") in ("user", "assistant") and isinstance(m.get("content"), str) and m["content"].strip()
            for m in turns
        ):
            if turns[-1]["role"] == "user":
                return [{"role": m["role"], "content": m["content"]} for m in turns]
    raise InvalidInput(
        f"case {index + 1} needs a non-empty `input`: a string, or up to {MAX_TURNS} messages"
        " `{role: user|assistant, content}` ending with a user's",
        code="invalid_case",
        case=index + 1,
    )


def _case(raw: dict[str, Any], index: int) -> store.NewCase:
    text = _input(raw.get("input"), index)
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
        files = await case_file_store.of_cases(conn, [case.id for case in cases])
    items = [{**asdict(case), "files": [case_files.view(f) for f in files.get(case.id, [])]} for case in cases]
    return {**asdict(row), "items": items}


async def add_from_run(principal: Principal, dataset_id: UUID, run_id: UUID) -> dict[str, Any]:
    """Append the run's question as a case, its answer the reference, the files it was sent with the case's files;
    404 for a run the caller cannot see."""
    run = await visible_run(principal, run_id)
    async with org_transaction(principal.org_id) as conn:
        await _dataset(conn, dataset_id)
        messages = await message_store.run_messages(conn, run_id)
        question = question_of(messages)
        if not question:
            raise InvalidInput("the run has no question of a person to take", code="run_without_question")
        earlier = await _earlier_turns(conn, run_id, run.chat_id)
        text: store.Input = [*earlier, {"role": "user", "content": question}] if earlier else question
        labels = await _source_labels(conn, run, messages)
        case = store.NewCase(
            text,
            answer_text(messages) or None,
            source_run_id=run_id,
            content_tier=labels.content_tier,
            untrusted=labels.untrusted,
        )
        [case_id] = await store.add_cases(conn, principal.org_id, dataset_id, [case])
        await case_files.copy_from_run(conn, principal.org_id, case_id, run.user_id, _question_content(messages))
        row = await store.get_dataset(conn, dataset_id)
    assert row is not None
    return asdict(row)


async def _source_labels(conn: Conn, run: RunRow, messages: list[Any]) -> Labels:
    """What the case's text carries from its source: the run's labels now, raised to its chat's (the earlier turns
    it copies, and the chat's classification)."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter  # not in the API layer: the API function reads no case

    labels = run_labels(RunSpec.model_validate(run.spec), ModelMessagesTypeAdapter.validate_python(messages))
    chat = await chat_store.lock_chat(conn, run.chat_id) if run.chat_id else None
    if chat is not None:
        labels = labels.join(chat.labels, Labels(content_tier=classification_tier(chat.classification)))
    return labels


async def _earlier_turns(conn: Conn, run_id: UUID, chat_id: UUID | None) -> list[dict[str, str]]:
    """The conversation's text turns before the run (its branch), the last HISTORY of them."""
    parent = await message_store.run_parent(conn, run_id)
    if chat_id is None or parent is None:
        return []
    turns = []
    for message in await message_store.branch_messages(conn, chat_id, parent):
        if not isinstance(message, dict):
            continue
        if message.get("kind") == "request" and (text := question_of([message])):
            turns.append({"role": "user", "content": text})
        elif message.get("kind") == "response" and (text := answer_text([message])):
            turns.append({"role": "assistant", "content": text})
    return turns[-HISTORY:]


def _question_content(messages: list[Any]) -> Any:
    """The content of the first question of a person among a run's stored messages (text, or a list of text and
    attachment references); None when there is none."""
    for message in messages:
        for part in message.get("parts", []) if isinstance(message, dict) else []:
            if part.get("part_kind") == "user-prompt":
                return part.get("content")
    return None


def question_of(messages: list[Any]) -> str:
    """The text of the first question of a person among a run's stored messages."""
    content = _question_content(messages)
    if content is None:
        return ""
    return content if isinstance(content, str) else " ".join(str(c) for c in content if isinstance(c, str))


async def _dataset(conn: Conn, dataset_id: UUID) -> store.DatasetRow:
    row = await store.get_dataset(conn, dataset_id)
    if row is None:
        raise NotFound("dataset not found", code="dataset_not_found")
    return row


async def add_case(principal: Principal, dataset_id: UUID, raw: dict[str, Any]) -> dict[str, Any]:
    """Append one case written by hand; the dataset afterwards."""
    case = _case(raw, 0)
    async with org_transaction(principal.org_id) as conn:
        if (await _dataset(conn, dataset_id)).cases >= MAX_CASES:
            raise InvalidInput(f"a dataset has at most {MAX_CASES} cases", code="too_many_cases")
        await store.add_cases(conn, principal.org_id, dataset_id, [case])
        row = await _dataset(conn, dataset_id)
    return asdict(row)


async def update_case(principal: Principal, dataset_id: UUID, case_id: UUID, changes: dict[str, Any]) -> dict[str, Any]:
    """Change the case's fields named in `changes` (input, expected, criteria, tags); the case afterwards."""
    async with org_transaction(principal.org_id) as conn:
        found = await store.get_case(conn, dataset_id, case_id)
        if found is None:
            raise NotFound("case not found", code="case_not_found")
        case = _case({**asdict(found), **changes}, found.position)
        await store.update_case(conn, case_id, case)
        after = await store.get_case(conn, dataset_id, case_id)
        files = await case_file_store.of_cases(conn, [case_id])
    assert after is not None
    return {**asdict(after), "files": [case_files.view(f) for f in files.get(case_id, [])]}


async def _delete_copies(conn: Conn, dataset_id: UUID, case_id: UUID | None = None) -> list[str]:
    """Delete the copies of the case files (of one case) the dataset's evaluations gave their case runs; their keys."""
    keys = []
    for user_id, run_ids in (await case_store.case_runs_of(conn, dataset_id, case_id)).items():
        keys += await attachment_store.delete_sent_with(conn, run_ids, user_id)
    return keys


async def delete_case(principal: Principal, dataset_id: UUID, case_id: UUID) -> None:
    """Delete the case with its files, its results in past evaluations and the copies of its files they used."""
    async with org_transaction(principal.org_id) as conn:
        if await store.get_case(conn, dataset_id, case_id) is None:
            raise NotFound("case not found", code="case_not_found")
        keys = await case_file_store.keys_of_case(conn, case_id) + await _delete_copies(conn, dataset_id, case_id)
        await store.delete_case(conn, case_id)
    await case_files.delete_objects(keys)


async def delete_dataset(principal: Principal, dataset_id: UUID) -> None:
    """Delete the dataset with its cases, their files (rows and objects), its evaluations and the copies of the files
    its evaluations' case runs were given (the runs and their chats stay)."""
    async with org_transaction(principal.org_id) as conn:
        keys = await case_file_store.keys_of_dataset(conn, dataset_id) + await _delete_copies(conn, dataset_id)
        if not await store.delete_dataset(conn, dataset_id):
            raise NotFound("dataset not found", code="dataset_not_found")
    await case_files.delete_objects(keys)
