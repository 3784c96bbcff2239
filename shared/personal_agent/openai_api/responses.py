"""`/v1/responses`: create (inline, or `background` — durable: it survives the client, can wait for a person, and
its stream resumes exactly with `starting_after`), retrieve, cancel, input items. A response is a run: its id is
`resp_` + the run's id, and `previous_response_id` continues the run's chat, whose history stays stored."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from personal_agent.api.openai_error_shape import openai_error
from personal_agent.approvals import store as approval_store
from personal_agent.chats import message_store
from personal_agent.db import org_transaction
from personal_agent.errors import InvalidInput, NotFound
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle import run_views
from personal_agent.lifecycle.question_answers import answer_question
from personal_agent.openai_api import response_object as objects
from personal_agent.openai_api.chat_completions import answer_schema, client_tools_of
from personal_agent.openai_api.chat_schema import JsonSchemaFormat, ResponseFormat
from personal_agent.openai_api.response_events import ResponseEvents
from personal_agent.openai_api.response_input import calls_in, from_input
from personal_agent.openai_api.response_schema import ResponseRequest
from personal_agent.openai_api.run_events import V1Run, events, launch
from personal_agent.openai_api.targets import resolve
from personal_agent.openai_api.tool_choice import choice_of
from personal_agent.runs import store
from personal_agent.spec.run_spec import ModelSettings, RunSpec

TRIGGER = "openai_api"


async def create(principal: Principal, body: ResponseRequest) -> RunSpec:
    """Store and start the response's run; 400/404 before anything is stored."""
    target = await resolve(principal, body.model)
    chat_id, earlier = None, {}
    if body.previous_response_id:
        previous = await run_row(principal, body.previous_response_id, param="previous_response_id")
        chat_id = previous.chat_id
        async with org_transaction(principal.org_id) as conn:
            earlier = calls_in(await message_store.run_messages(conn, previous.id))
    tools = client_tools_of(body.tools or [], param="tools")
    choice = choice_of(body.tool_choice, tools)
    settings = ModelSettings(
        temperature=body.temperature, top_p=body.top_p, max_tokens=body.max_output_tokens, tool_choice=choice.forced
    )
    run = V1Run(
        target=target,
        conversation=from_input(body.items(), body.instructions, earlier),
        client_tools=tools if choice.offer else (),
        settings=settings,
        schema=_schema(body),
        mode="durable" if body.background else "inline",
        approval_policy="wait" if body.background else "deny",
        chat_id=chat_id,
        echo=objects.echo_of(body),
        input_param="input",
    )
    return await launch(principal, run)


def _schema(body: ResponseRequest) -> dict[str, Any] | None:
    text_format = body.text.format if body.text else None
    if text_format is None:
        return None
    wrapped = JsonSchemaFormat.model_validate({"name": text_format.name or "output", "schema": text_format.schema_})
    try:
        return answer_schema(ResponseFormat(type=text_format.type, json_schema=wrapped))
    except InvalidInput as exc:
        raise InvalidInput(exc.message, code=exc.code, param="text.format") from exc


async def run_row(principal: Principal, response_id: str, *, param: str | None = None) -> store.RunRow:
    """The `/v1` run a response id names, if the caller may see it; 404 otherwise."""
    run_id = objects.run_id_of(response_id)
    try:
        row = await run_views.visible_run(principal, run_id)
    except NotFound:
        row = None
    if row is None or row.trigger_source != TRIGGER:
        raise NotFound(f"No response found with id '{response_id[:80]}'.", code="response_not_found", param=param)
    return row


async def retrieve(principal: Principal, response_id: str) -> dict[str, Any]:
    return await current(await run_row(principal, response_id))


async def current(row: store.RunRow) -> dict[str, Any]:
    """The response object as Postgres has it now (with the questions it waits on)."""
    async with org_transaction(row.org_id) as conn:
        fresh = await store.get_run(conn, row.id) or row
        messages = await message_store.run_messages(conn, row.id)
        tokens = await store.tree_tokens(conn, row.id)
        waits = await approval_store.of_runs(conn, [row.id]) if fresh.status == "waiting" else []
    questions = [{**q.args, "question_id": q.id} for q in waits if q.kind == "question" and q.status == "pending"]
    return objects.response_object(fresh, messages, tokens, questions)


async def answered(principal: Principal, body: ResponseRequest) -> dict[str, Any] | None:
    """Answers to the questions a background response waits on (`function_call_output` items whose call ids are
    its questions', with it as `previous_response_id`): each goes to its question and the same response goes on —
    its object is the reply. None when the request is not that (it starts a new response)."""
    items = body.items()
    if not body.previous_response_id or not all(item.type == "function_call_output" for item in items):
        return None
    row = await run_row(principal, body.previous_response_id, param="previous_response_id")
    if row.status != "waiting":
        return None
    async with org_transaction(row.org_id) as conn:
        waits = await approval_store.of_runs(conn, [row.id])
    questions = {str(q.id): q for q in waits if q.kind == "question" and q.status == "pending"}
    if not all(item.call_id in questions for item in items):
        return None
    if body.stream:
        raise InvalidInput(
            "answer a question without `stream`, then follow the response with GET ?stream=true&starting_after=N",
            code="answer_not_streamed",
            param="stream",
        )
    for index, item in enumerate(items):
        question = questions[str(item.call_id)]
        try:
            await answer_question(principal, question.id, _answer_value(question.args, item.output))
        except InvalidInput as exc:
            raise InvalidInput(exc.message, code=exc.code, param=f"input[{index}].output") from exc
    return await current(row)


def _answer_value(form: dict[str, Any], output: Any) -> Any:
    """The answer as the question's form takes it: a JSON value for a schema, else the text."""
    if isinstance(output, str) and form.get("schema") is not None:
        try:
            return json.loads(output)
        except ValueError:
            return output
    return output


async def cancel(principal: Principal, response_id: str) -> dict[str, Any]:
    """Stop a background response (OpenAI cancels only those); its object as it is then."""
    row = await run_row(principal, response_id)
    if row.mode != "durable":
        raise InvalidInput("only a background response can be cancelled", code="not_background", param="response_id")
    await run_views.cancel(principal, row.id)
    return await current(row)


async def input_items(principal: Principal, response_id: str) -> dict[str, Any]:
    row = await run_row(principal, response_id)
    async with org_transaction(row.org_id) as conn:
        messages = await message_store.run_messages(conn, row.id)
    items = objects.input_items(RunSpec.model_validate(row.spec), messages)
    first, last = (items[0]["id"], items[-1]["id"]) if items else (None, None)
    return {"object": "list", "data": items, "first_id": first, "last_id": last, "has_more": False}


async def row_of(spec: RunSpec) -> store.RunRow:
    async with org_transaction(spec.org_id) as conn:
        row = await store.get_run(conn, spec.run_id)
    assert row is not None  # just launched
    return row


async def finished(row: store.RunRow, frames: AsyncIterator[str]) -> dict[str, Any]:
    """Wait for the run to end (a request that is neither streamed nor in the background), then its object."""
    async for event in events(frames):
        if event is not None and event.get("type") in ("RUN_ERROR", "RUN_FINISHED"):
            if (event.get("outcome") or {}).get("type") != "interrupt":
                break
    return await current(row)


async def semantic_frames(row: store.RunRow, frames: AsyncIterator[str], after: int = -1) -> AsyncIterator[str]:
    """The run's semantic events as SSE, those numbered after `after` only (a resume), ending with the terminal one."""
    spec = RunSpec.model_validate(row.spec)
    builder = ResponseEvents(
        objects.skeleton(spec, "queued", int(row.created_at.timestamp())),
        frozenset(t.name for t in spec.client_tools),
        structured=spec.answer_schema is not None,
    )
    pending = builder.opening()
    async for event in events(frames):
        if event is None:
            yield ": ping\n\n"
            continue
        if event.get("type") == "CUSTOM" and event.get("name") == "resume_expired":
            message = "this response's events are no longer kept; retrieve it without `stream`"
            yield _sse("error", openai_error(410, "stream_expired", message, {})["error"] | {"type": "error"})
            return
        pending += builder.feed(event)
        for out in pending:
            if out["sequence_number"] > after:
                yield _sse(out["type"], out)
        pending = []
        if builder.ending:
            break
    if builder.ending is None:
        return  # the relay's lifetime ended first: the client resumes with `starting_after`
    final = builder.terminal(await current(row))
    if final["sequence_number"] > after:
        yield _sse(final["type"], final)


def _sse(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"
