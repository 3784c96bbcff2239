"""Edit and branch: a chat's messages form a tree. A run continues from a chosen message (or starts the chat over,
or answers a user message again); the model sees exactly that branch; the transcript shows one branch with each
message's siblings; runs on any branch stream, resume and checkpoint (inline and durable) from their own branch."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import psycopg
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from tests.auth import auth_headers
from tests.emulators import Emulator
from tests.scripted import scripted_model, tool_rounds
from tests.sse import read_events


def prompts(messages: list[ModelMessage]) -> list[str]:
    return [
        str(p.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    ]


def echo_branch(rounds: int = 0) -> Any:
    """Calls `calculate` for `rounds` rounds each turn, then answers with the user turns it was sent, in order."""

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        turn = max(i for i, m in enumerate(messages) if prompts([m]))
        done = tool_rounds(messages[turn:])
        if done < rounds:
            yield {0: DeltaToolCall(name="calculate", json_args='{"expression": "2*3"}', tool_call_id=f"c{done}")}
        else:
            yield "saw " + "|".join(prompts(messages))

    return script


async def run(http: httpx.AsyncClient, headers: dict[str, str], chat_id: str, body: dict[str, Any]) -> dict[str, Any]:
    started = await http.post(f"/api/v1/chats/{chat_id}/runs", json=body, headers=headers)
    assert started.status_code == 202, started.text
    frames = await read_events(http, started.json()["events_url"], headers)
    assert frames[-1].type == "RUN_FINISHED", frames[-1].data
    return {**started.json(), "frames": frames}


async def branch(http: httpx.AsyncClient, headers: dict[str, str], chat_id: str, leaf: int | None = None) -> Any:
    query = f"?leaf={leaf}" if leaf is not None else ""
    page = await http.get(f"/api/v1/chats/{chat_id}/messages{query}", headers=headers)
    assert page.status_code == 200, page.text
    return page.json()


def turns(page: dict[str, Any]) -> list[tuple[str, str]]:
    return [(i["role"], i["text"]) for i in page["items"] if i["role"] in ("user", "assistant") and i.get("text")]


def message_of(page: dict[str, Any], role: str, text: str) -> dict[str, Any]:
    return next(i for i in page["items"] if i["role"] == role and i.get("text") == text)


async def three_turn_chat(http: httpx.AsyncClient, headers: dict[str, str], model: str) -> str:
    chat_id = str((await http.post("/api/v1/chats", json={"title": "b"}, headers=headers)).json()["id"])
    for text in ("one", "two", "three"):
        await run(http, headers, chat_id, {"message": text, "model": model, "mode": "inline"})
    return chat_id


async def test_branch_from_the_first_message_and_each_branch_reads_right(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    headers = auth_headers(make_tenant())
    with scripted_model(echo_branch()) as (model, _):
        chat_id = await three_turn_chat(http, headers, model)
        original = await branch(http, headers, chat_id)
        assert turns(original) == [
            ("user", "one"),
            ("assistant", "saw one"),
            ("user", "two"),
            ("assistant", "saw one|two"),
            ("user", "three"),
            ("assistant", "saw one|two|three"),
        ]
        assert all(len(i["sibling_ids"]) == 1 for i in original["items"])
        first_answer = message_of(original, "assistant", "saw one")["message_id"]

        # Branch after the first exchange: the model sees only "one", then the new turn.
        after_first = await run(
            http, headers, chat_id, {"message": "deux", "model": model, "parent_message_id": first_answer}
        )
        # Edit the first message itself: a new first turn, nothing before it.
        edited = await run(http, headers, chat_id, {"message": "uno", "model": model, "parent_message_id": None})

        latest = await branch(http, headers, chat_id)  # without `leaf`: the branch written last
        assert turns(latest) == [("user", "uno"), ("assistant", "saw uno")]
        uno = message_of(latest, "user", "uno")
        one = message_of(original, "user", "one")
        assert uno["sibling_ids"] == [one["message_id"], uno["message_id"]]  # ‹ 2 / 2 ›
        assert uno["parent_id"] is None and latest["leaf_id"] == latest["items"][-1]["message_id"]

        second = await branch(http, headers, chat_id, leaf=message_of(original, "user", "one")["message_id"])
        assert turns(second) == [
            ("user", "one"),
            ("assistant", "saw one"),
            ("user", "deux"),
            ("assistant", "saw one|deux"),
        ]
        two, deux = message_of(original, "user", "two"), message_of(second, "user", "deux")
        assert deux["sibling_ids"] == [two["message_id"], deux["message_id"]]

        back = await branch(http, headers, chat_id, leaf=two["message_id"])  # ‹ back to the first branch
        assert turns(back) == turns(original)
    assert after_first["run_id"] != edited["run_id"]


async def test_regenerate_answers_again_as_a_sibling(http: httpx.AsyncClient, make_tenant: Any) -> None:
    headers = auth_headers(make_tenant())
    with scripted_model(echo_branch()) as (model, recorder):
        chat_id = await three_turn_chat(http, headers, model)
        original = await branch(http, headers, chat_id)
        two = message_of(original, "user", "two")
        calls_before = len(recorder.calls)
        await run(http, headers, chat_id, {"model": model, "parent_message_id": two["message_id"], "regenerate": True})
        assert len(recorder.calls) == calls_before + 1
        regenerated = await branch(http, headers, chat_id)
    # The regenerated answer saw "one|two" again (no new user turn), and sits beside the old answer.
    assert turns(regenerated) == [
        ("user", "one"),
        ("assistant", "saw one"),
        ("user", "two"),
        ("assistant", "saw one|two"),
    ]
    old_answer = message_of(original, "assistant", "saw one|two")
    new_answer = regenerated["items"][-1]
    assert new_answer["sibling_ids"] == [old_answer["message_id"], new_answer["message_id"]]
    assert new_answer["parent_id"] == two["message_id"]
    old = await branch(http, headers, chat_id, leaf=old_answer["message_id"])
    assert turns(old)[-2:] == [("user", "three"), ("assistant", "saw one|two|three")]


async def test_bad_parents_are_refused_and_nothing_is_written(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    other_headers = auth_headers(make_tenant())
    with scripted_model(echo_branch()) as (model, _):
        chat_id = await three_turn_chat(http, headers, model)
        other_chat = await three_turn_chat(http, other_headers, model)
        page = await branch(http, headers, chat_id)
        foreign = (await branch(http, other_headers, other_chat))["items"][1]["message_id"]
        user_turn = message_of(page, "user", "two")["message_id"]
        answer = message_of(page, "assistant", "saw one")["message_id"]
        cases = [
            ({"message": "x", "parent_message_id": foreign}, 404, "message_not_found"),
            ({"message": "x", "parent_message_id": user_turn}, 422, "invalid_parent"),
            ({"parent_message_id": answer, "regenerate": True}, 422, "invalid_parent"),
            ({"message": "x", "parent_message_id": user_turn, "regenerate": True}, 422, "regenerate_with_message"),
            ({"regenerate": True}, 422, "parent_required"),
        ]
        for body, status, code in cases:
            refused = await http.post(f"/api/v1/chats/{chat_id}/runs", json={"model": model, **body}, headers=headers)
            assert (refused.status_code, refused.json()["code"]) == (status, code), body
        missing = await http.get(f"/api/v1/chats/{chat_id}/messages?leaf={foreign}", headers=headers)
        assert (missing.status_code, missing.json()["code"]) == (404, "message_not_found")
    with psycopg.connect(admin_url) as conn:
        row = conn.execute("SELECT count(*) FROM runs WHERE chat_id = %s", [chat_id]).fetchone()
    assert row is not None and row[0] == 3


async def test_runs_on_both_branches_stream_resume_and_checkpoint_their_branch(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, durable_aws: Emulator
) -> None:
    """A tool round makes each run checkpoint; durable Tasks that hand back after every node rebuild the history
    from the checkpoint and the branch; a reader that drops the stream resumes it exactly."""
    from personal_agent.settings import get_settings

    headers = auth_headers(make_tenant())
    settings = get_settings()
    with scripted_model(echo_branch(rounds=1)) as (model, recorder):
        chat_id = await three_turn_chat(http, headers, model)
        page = await branch(http, headers, chat_id)
        first_answer = message_of(page, "assistant", "saw one")["message_id"]
        second_answer = message_of(page, "assistant", "saw one|two")["message_id"]
        original = settings.step_time_budget_seconds
        settings.step_time_budget_seconds = 0.000001  # every durable Task hands back after one node
        try:
            durable = await run(
                http,
                headers,
                chat_id,
                {"message": "on A", "model": model, "mode": "durable", "parent_message_id": first_answer},
            )
        finally:
            settings.step_time_budget_seconds = original
        started = await http.post(
            f"/api/v1/chats/{chat_id}/runs",
            json={"message": "on B", "model": model, "mode": "inline", "parent_message_id": second_answer},
            headers=headers,
        )
        full = await read_events(http, started.json()["events_url"], headers)
        head = await read_events(http, started.json()["events_url"], headers, limit=3)
        rest = await read_events(http, started.json()["events_url"], headers, last_event_id=head[-1].id)
        assert head + rest == full and full[-1].type == "RUN_FINISHED"
        on_b = await branch(http, headers, chat_id)
        with psycopg.connect(admin_url) as conn:
            tip = conn.execute("SELECT max(id) FROM messages WHERE run_id = %s", [durable["run_id"]]).fetchone()
        assert tip is not None
        on_a = await branch(http, headers, chat_id, leaf=tip[0])
    text = "".join(f.data["delta"] for f in durable["frames"] if f.type == "TEXT_MESSAGE_CONTENT")
    assert text == "saw one|on A"
    assert turns(on_a)[-1] == ("assistant", "saw one|on A")
    assert turns(on_b)[-1] == ("assistant", "saw one|two|on B")
    assert len(recorder.calls) == 5 * 2  # two requests per run: none was sent twice across Tasks
    with psycopg.connect(admin_url) as conn:
        states = conn.execute(
            "SELECT c.state->'chat_prefix' FROM run_checkpoints c WHERE c.run_id = %s ORDER BY seq",
            [durable["run_id"]],
        ).fetchall()
    # the chat before the run: "one", its tool call and result, "saw one"
    assert len(states) >= 3 and all(s[0]["upto"] == first_answer and s[0]["count"] == 4 for s in states)
