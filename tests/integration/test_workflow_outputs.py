"""Workflow outputs: each headless run's result goes to a callback URL signed with Standard Webhooks, retried with
backoff through the outputs queue (moto SQS, the deliver function dispatched in-process), logged, redeliverable;
to Slack/Teams incoming webhooks; by e-mail through SES (moto). Pending approvals of headless runs notify the
owner the same way. Outbound URLs pass the web_fetch address checks unless an admin allow-lists the host."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from standardwebhooks import Webhook

from personal_agent.settings import get_settings
from tests.auth import auth_headers
from tests.email_tool import email_script
from tests.feed import my_feed
from tests.receiver import Receiver
from tests.scripted import scripted_model
from tests.ses_outbox import sent_to
from tests.workflows import create_workflow, echo_prompt, sign

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def allow_receiver(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> Receiver:
    """An admin allow-lists the test receiver (it is on loopback); retries come fast here."""
    monkeypatch.setattr(get_settings(), "output_allow_hosts", f"127.0.0.1:{receiver.port}")
    monkeypatch.setattr(get_settings(), "output_retry_base_seconds", 1)
    monkeypatch.setattr(get_settings(), "output_max_attempts", 3)
    return receiver


async def _fire(http: httpx.AsyncClient, workflow: dict[str, Any], body: bytes = b'{"title": "build 7 failed"}') -> str:
    answer = await http.post(
        f"/api/v1/hooks/{workflow['id']}", content=body, headers=sign(workflow["signing_secret"], body)
    )
    assert answer.status_code == 202, answer.text
    return str(answer.json()["run_id"])


async def _log_until(
    http: httpx.AsyncClient, headers: dict[str, str], workflow_id: str, done: Any, timeout: float = 30
) -> list[dict[str, Any]]:
    """The delivery log once `done(items)` holds: read again after each attempt the owner's feed announces."""
    feed = await my_feed(http, headers)  # before the first read: no attempt falls between the read and the wait
    try:
        while True:
            items = (await http.get(f"/api/v1/workflows/{workflow_id}/output-deliveries", headers=headers)).json()
            if done(items["items"]):
                return list(items["items"])
            attempted = await asyncio.to_thread(
                feed.next, "output_delivery", lambda v: v["workflow_id"] == workflow_id, timeout
            )
            if attempted is None:
                return list(items["items"])
    finally:
        feed.close()


async def test_a_callback_gets_the_result_signed_with_standard_webhooks_and_can_be_redelivered(
    http: httpx.AsyncClient, make_tenant: Any, allow_receiver: Receiver
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(echo_prompt) as (model, _):
        workflow = await create_workflow(http, headers, model=model, prompt_template="Report: {{body.title}}")
        added = await http.post(
            f"/api/v1/workflows/{workflow['id']}/outputs",
            json={"kind": "webhook", "url": allow_receiver.url},
            headers=headers,
        )
        assert added.status_code == 201, added.text
        secret = added.json()["signing_secret"]
        assert (
            secret.startswith("whsec_") and added.json()["target_hint"] == f"http://127.0.0.1:{allow_receiver.port}/…"
        )
        listed = (await http.get(f"/api/v1/workflows/{workflow['id']}/outputs", headers=headers)).json()["items"]
        assert [o["kind"] for o in listed] == ["webhook"] and "signing_secret" not in listed[0]

        run_id = await _fire(http, workflow)
        [(first_headers, first_body)] = allow_receiver.wait_for(1)

    # The receiver verifies the delivery with the Standard Webhooks library and the secret it was given.
    event = Webhook(secret).verify(first_body, first_headers)
    assert event["type"] == "run.finished"
    assert event["data"]["run_id"] == run_id and event["data"]["status"] == "succeeded"
    assert event["data"]["output"] == "Echo: Report: build 7 failed"
    assert event["data"]["workflow_name"] == "ci-report"
    with pytest.raises(Exception):  # noqa: B017 - any verification error: a wrong secret never verifies
        Webhook("whsec_" + "A" * 44).verify(first_body, first_headers)

    items = await _log_until(http, headers, workflow["id"], lambda i: i and i[0]["status"] == "succeeded")
    assert [(i["status"], i["attempts"], i["event"], i["last_status_code"]) for i in items] == [
        ("succeeded", 1, "run.finished", 204)
    ]

    redone = await http.post(
        f"/api/v1/workflows/{workflow['id']}/output-deliveries/{items[0]['id']}/redeliver", headers=headers
    )
    assert redone.status_code == 202, redone.text
    requests = allow_receiver.wait_for(2)
    again_headers, again_body = requests[1]
    assert Webhook(secret).verify(again_body, again_headers)["data"]["run_id"] == run_id
    assert again_headers["webhook-id"] == first_headers["webhook-id"]  # the same message: a receiver drops repeats


async def test_a_failing_receiver_is_retried_with_backoff_then_shown_failed_with_its_last_error(
    http: httpx.AsyncClient, make_tenant: Any, allow_receiver: Receiver
) -> None:
    allow_receiver.status = 500
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(echo_prompt) as (model, _):
        workflow = await create_workflow(http, headers, model=model)
        await http.post(
            f"/api/v1/workflows/{workflow['id']}/outputs",
            json={"kind": "webhook", "url": allow_receiver.url},
            headers=headers,
        )
        await _fire(http, workflow)
        requests = allow_receiver.wait_for(3)

    items = await _log_until(http, headers, workflow["id"], lambda i: i and i[0]["status"] == "failed")
    [failed] = items
    assert failed["status"] == "failed" and failed["attempts"] == 3
    assert failed["last_status_code"] == 500 and "HTTP 500" in failed["last_error"]
    assert "receiver says no" in failed["last_error"]
    assert len({h["webhook-id"] for h, _ in requests}) == 1
    # Backoff: the second try came at least the base (1 s) after the first, the third at least 2 s after that.
    stamps = [int(h["webhook-timestamp"]) for h, _ in requests[:3]]
    assert stamps[1] - stamps[0] >= 1 and stamps[2] - stamps[1] >= 2, stamps
    assert len(allow_receiver.requests) == 3  # no fourth try


async def test_a_callback_to_loopback_or_metadata_is_refused_unless_allow_listed(
    http: httpx.AsyncClient, make_tenant: Any, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    workflow = await create_workflow(http, headers)
    url = f"/api/v1/workflows/{workflow['id']}/outputs"
    for target in (receiver.url, "http://localhost:9/x", "http://10.0.0.8/hook", "http://169.254.169.254/latest"):
        refused = await http.post(url, json={"kind": "webhook", "url": target}, headers=headers)
        assert refused.status_code == 422, (target, refused.text)
        assert (
            refused.json()["code"] == "address_not_allowed"
            and "not a public internet address" in refused.json()["message"]
        )
    for bad, code in (({"kind": "slack"}, "field_required"), ({"kind": "email", "email": "nope"}, "invalid_email")):
        answer = await http.post(url, json=bad, headers=headers)
        assert answer.status_code == 422 and answer.json()["code"] == code, answer.text
    assert (
        await http.post(url, json={"kind": "webhook", "url": "ftp://example.com/x"}, headers=headers)
    ).status_code == 422

    # Allow-listed by an admin: loopback is accepted; metadata never.
    monkeypatch.setattr(get_settings(), "output_allow_hosts", f"127.0.0.1:{receiver.port},169.254.169.254")
    allowed = await http.post(url, json={"kind": "webhook", "url": receiver.url}, headers=headers)
    assert allowed.status_code == 201, allowed.text
    metadata = await http.post(url, json={"kind": "webhook", "url": "http://169.254.169.254/x"}, headers=headers)
    assert metadata.status_code == 422
    assert [o["kind"] for o in (await http.get(url, headers=headers)).json()["items"]] == ["webhook"]

    # The check runs again at send time: taken off the allow-list, the delivery fails with the reason, unsent.
    monkeypatch.setattr(get_settings(), "output_allow_hosts", "")
    monkeypatch.setattr(get_settings(), "output_max_attempts", 1)
    with scripted_model(echo_prompt) as (model, _):
        await http.patch(f"/api/v1/workflows/{workflow['id']}", json={"model": model}, headers=headers)
        await _fire(http, workflow)
        items = await _log_until(http, headers, workflow["id"], lambda i: i and i[0]["status"] == "failed")
    assert items[0]["status"] == "failed" and "not a public internet address" in items[0]["last_error"]
    assert receiver.requests == []


async def test_slack_teams_and_email_outputs_and_headless_approvals_notify_the_owner(
    http: httpx.AsyncClient, make_tenant: Any, allow_receiver: Receiver, email_tool: list[dict[str, Any]]
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    inbox = f"{tenant.subject}@example.test"  # the owner's own address (e-mail outputs go to members only)
    with scripted_model(email_script) as (model, _):
        workflow = await create_workflow(http, headers, model=model, tools=["send_email"], approval_policy="wait")
        outputs = f"/api/v1/workflows/{workflow['id']}/outputs"
        for body in (
            {"kind": "slack", "url": allow_receiver.url + "/slack", "events": ["approval.requested"]},
            {"kind": "teams", "url": allow_receiver.url + "/teams", "events": ["approval.requested"]},
            {"kind": "email", "email": inbox, "events": ["approval.requested"]},
        ):
            added = await http.post(outputs, json=body, headers=headers)
            assert added.status_code == 201 and added.json()["signing_secret"] is None, added.text
        await _fire(http, workflow)
        requests = allow_receiver.wait_for(2)
        items = await _log_until(
            http, headers, workflow["id"], lambda i: len(i) == 3 and all(x["status"] == "succeeded" for x in i)
        )

    texts = sorted(json.loads(body)["text"] for _, body in requests)
    assert all("ci-report: approval needed for send_email" in t and "bob@example.com" in t for t in texts), texts
    assert {i["output_kind"] for i in items} == {"slack", "teams", "email"}
    assert {i["event"] for i in items} == {"approval.requested"}
    sent = sent_to(inbox)
    assert len(sent) == 1 and sent[0].subject == "ci-report: approval needed for send_email"
    assert sent[0].source == get_settings().output_email_from
    assert email_tool == []  # nobody approved: the tool has not acted


async def _ask_city(messages: list[Any], info: Any) -> Any:
    """Asks the person which city, then answers with it."""
    from pydantic_ai.messages import ModelRequest, ToolReturnPart
    from pydantic_ai.models.function import DeltaToolCall

    answers = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
    if not answers:
        form = {"question": "Which city should the report cover?", "choices": ["Paris", "Rome"]}
        yield {0: DeltaToolCall(name="ask_user", json_args=json.dumps(form), tool_call_id="q1")}
    else:
        yield f"Covering {answers[0].content}."


async def test_a_headless_runs_question_reaches_slack_and_email_outputs_with_the_link_to_answer_it(
    http: httpx.AsyncClient, make_tenant: Any, allow_receiver: Receiver
) -> None:
    """Issue 33: a person answers a question "from a link in an e-mail or Slack output" — an output that asks for
    approval requests also gets the run's questions (both wait for a person), with the chat where the form is."""
    tenant = make_tenant()
    headers = auth_headers(tenant)
    inbox = f"{tenant.subject}@example.test"
    with scripted_model(_ask_city) as (model, _):
        workflow = await create_workflow(http, headers, model=model, tools=["ask_user"], approval_policy="wait")
        outputs = f"/api/v1/workflows/{workflow['id']}/outputs"
        for body in (
            {"kind": "slack", "url": allow_receiver.url + "/slack", "events": ["approval.requested"]},
            {"kind": "email", "email": inbox, "events": ["question.asked"]},
        ):
            added = await http.post(outputs, json=body, headers=headers)
            assert added.status_code == 201, added.text
        await _fire(http, workflow)
        ((_, slack),) = allow_receiver.wait_for(1)
        items = await _log_until(
            http, headers, workflow["id"], lambda i: len(i) == 2 and all(x["status"] == "succeeded" for x in i)
        )
    text = json.loads(slack)["text"]
    assert text.startswith("ci-report: a question for you\nWhich city should the report cover?\nChoices: Paris, Rome")
    assert {i["event"] for i in items} == {"question.asked"}
    questions = (await http.get("/api/v1/questions", params={"status": "pending"}, headers=headers)).json()["items"]
    chat_link = f"/chats/{questions[0]['chat_id']}"
    assert text.endswith(chat_link)
    sent = sent_to(inbox)
    assert len(sent) == 1 and sent[0].subject == "ci-report: a question for you" and chat_link in sent[0].body


async def test_a_fire_at_a_busy_workflow_chat_is_queued_and_its_run_still_reaches_the_outputs(
    http: httpx.AsyncClient, make_tenant: Any, allow_receiver: Receiver
) -> None:
    """A second delivery while the workflow's run waits for a person is queued behind it (issue 33's follow-ups):
    202 `queued` with the run id it will have (before, the delivery's foreign key to a run not stored yet was a
    500), and when that run has happened its result still reaches the workflow's outputs."""
    tenant = make_tenant()
    headers = auth_headers(tenant)
    asked: list[bool] = []

    async def ask_once(messages: list[Any], info: Any) -> Any:
        """The first run asks (and waits); later runs answer at once."""
        if not asked:
            asked.append(True)
            async for part in _ask_city(messages, info):
                yield part
        else:
            yield "Done."

    with scripted_model(ask_once) as (model, _):
        workflow = await create_workflow(http, headers, model=model, tools=["ask_user"], approval_policy="wait")
        added = await http.post(
            f"/api/v1/workflows/{workflow['id']}/outputs",
            json={"kind": "slack", "url": allow_receiver.url + "/slack", "events": ["run.finished"]},
            headers=headers,
        )
        assert added.status_code == 201, added.text
        await _fire(http, workflow)  # its run asks a question and waits: the chat is busy
        questions = await http.get("/api/v1/questions", params={"status": "pending"}, headers=headers)
        while not questions.json()["items"]:
            questions = await http.get("/api/v1/questions", params={"status": "pending"}, headers=headers)
        fired = await http.post(
            f"/api/v1/workflows/{workflow['id']}/test-fire", json={"body": [None, None]}, headers=headers
        )
        assert fired.status_code == 202 and fired.json()["status"] == "queued", fired.text
        queued_run = fired.json()["run_id"]
        answered = await http.post(
            f"/api/v1/questions/{questions.json()['items'][0]['id']}", json={"answer": "Rome"}, headers=headers
        )
        assert answered.status_code == 200, answered.text
        items = await _log_until(
            http, headers, workflow["id"], lambda i: sum(x["run_id"] == queued_run for x in i) == 1
        )
    assert any(x["run_id"] == queued_run and x["event"] == "run.finished" for x in items)
