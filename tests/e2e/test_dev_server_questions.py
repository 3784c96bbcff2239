"""`ask_user` on `pa dev` as a user runs it (issue 33, item 1): a webhook starts a durable run whose model (a scripted
OpenAI-compatible server on loopback) asks which environment to deploy to. The run waits in the state machine's
callback Task (the execution sits in `WaitForApproval`, no Task running), an answer that is not one of the choices
is 422 and changes nothing, the right answer over the API finishes the run with it, and a second answer is 409. A
second workflow with a 2-second timeout takes the question's default; a question without one expires there, the run
goes on without the answer, and a late answer is 409 `question_expired`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import httpx
import pytest

from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.fake_provider import FakeProvider, last_user_text, running_fake_provider, tool_results
from tests.sfn import wait_for_execution
from tests.workflows import sign

QUESTION = {"question": "Which environment?", "choices": ["staging", "production"], "default": "staging"}
NO_DEFAULT = {"question": "Which region?", "choices": ["eu", "us"]}


def deploy_script(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Asks first; then deploys where the answer (the `ask_user` result) says. A region has no default: unanswered,
    it does not deploy."""
    answers = tool_results(messages)
    if "region" in last_user_text(messages):
        if not answers:
            return {"tool_calls": [{"name": "ask_user", "arguments": NO_DEFAULT}]}
        return {"content": f"No region was chosen for build {last_user_text(messages)[-2:]}: not deploying."}
    if not answers:
        return {"tool_calls": [{"name": "ask_user", "arguments": QUESTION}]}
    return {"content": f"Deploying build {last_user_text(messages)[-2:]} to {answers[-1]}."}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevServer, FakeProvider]]:
    with (
        running_fake_provider(deploy_script) as fake,
        running_pa_dev(tmp_path_factory.mktemp("pa-dev-questions")) as server,
    ):
        yield server, fake


def _events(http: httpx.Client, run_id: str, *, to_end: bool = False) -> list[dict[str, Any]]:
    """The run's events from its start to its first RUN_FINISHED (its end, or a wait for a person), or with `to_end`
    to the RUN_FINISHED that ends it (the stream stays open while a run waits)."""
    events: list[dict[str, Any]] = []
    with http.stream("GET", f"/api/v1/runs/{run_id}/events") as stream:
        assert stream.status_code == 200
        for line in stream.iter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line[5:]))
                last = events[-1]
                if last["type"] == "RUN_FINISHED" and (not to_end or last["outcome"]["type"] != "interrupt"):
                    return events
    return events


def _execution(server: DevServer, run_id: str, *, ended: bool = False) -> tuple[str, list[dict[str, Any]]]:
    """The run's execution: its status and its history; with `ended`, once it has ended (the run's last event is
    published by the execution's last Task, before the execution itself reaches its end state)."""
    aws = {"endpoint_url": server.aws_url, "region_name": "us-east-1"}
    sfn = boto3.client("stepfunctions", aws_access_key_id="testing", aws_secret_access_key="testing", **aws)
    for machine in sfn.list_state_machines()["stateMachines"]:
        for execution in sfn.list_executions(stateMachineArn=machine["stateMachineArn"])["executions"]:
            if execution["name"] == run_id:
                arn = execution["executionArn"]
                if ended:
                    wait_for_execution(sfn, arn)
                history = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
                return sfn.describe_execution(executionArn=arn)["status"], history
    raise AssertionError(f"no execution for run {run_id}")


def _setup(
    http: httpx.Client, server: DevServer, fake: FakeProvider, timeout: int, prompt: str = "Deploy build {{body.build}}"
) -> dict[str, Any]:
    admin = server.auth_for("boss", "org-admin")
    providers = http.get("/api/v1/admin/providers", headers=admin).json()["items"]
    if not any(p["name"] == "fake" for p in providers):
        provider = http.post(
            "/api/v1/admin/providers",
            headers=admin,
            json={"name": "fake", "kind": "openai-compatible", "base_url": fake.base_url, "trust_tier": 2},
        )
        assert provider.status_code == 201, provider.text
        added = http.post(f"/api/v1/admin/providers/{provider.json()['id']}/models", headers=admin, json={"name": "m"})
        assert added.status_code == 201, added.text
    created = http.post(
        "/api/v1/workflows",
        headers=server.auth,
        json={
            "name": f"deploy-{timeout}-{len(prompt)}",
            "model": "fake:m",
            "tools": ["ask_user"],
            "prompt_template": prompt,
            "approval_timeout_seconds": timeout,
        },
    )
    assert created.status_code == 201, created.text
    return dict(created.json())


def _fire(http: httpx.Client, workflow: dict[str, Any]) -> str:
    body = b'{"build": 42}'
    fired = http.post(f"/api/v1/hooks/{workflow['id']}", content=body, headers=sign(workflow["signing_secret"], body))
    assert fired.status_code == 202, fired.text
    return str(fired.json()["run_id"])


@pytest.mark.timeout(300)
def test_a_webhook_run_asks_waits_in_its_callback_task_and_finishes_with_the_answer(
    world: tuple[DevServer, FakeProvider],
) -> None:
    server, fake = world
    with httpx.Client(base_url=server.url, headers=server.auth, timeout=60) as http:
        run_id = _fire(http, _setup(http, server, fake, timeout=3600))
        asked = _events(http, run_id)
        question = next(e["value"] for e in asked if e.get("name") == "question_asked")
        assert (question["question"], question["choices"], question["default"]) == (
            "Which environment?",
            ["staging", "production"],
            "staging",
        )
        assert asked[-1]["type"] == "RUN_FINISHED" and asked[-1]["outcome"]["type"] == "interrupt"
        assert asked[-1]["outcome"]["interrupts"][0]["reason"] == "user_input"

        pending = http.get("/api/v1/questions", params={"status": "pending"}).json()["items"]
        assert [(q["id"], q["run_id"], q["status"]) for q in pending] == [(question["question_id"], run_id, "pending")]
        other = server.auth_for("mallory", "user")  # the same org, not the run's person: the question is not theirs
        assert http.get("/api/v1/questions", headers=other).json()["items"] == []
        stolen = http.post(f"/api/v1/questions/{question['question_id']}", json={"answer": "staging"}, headers=other)
        assert (stolen.status_code, stolen.json()["code"]) == (404, "question_not_found")

        # Waiting costs nothing: the execution sits in its callback Task (scheduled, never ended), no Task runs.
        status, history = _execution(server, run_id)
        entered = [e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e]
        assert status == "RUNNING" and entered[-1] == "WaitForApproval", entered
        assert http.get(f"/api/v1/runs/{run_id}").json()["status"] == "waiting"

        wrong = http.post(f"/api/v1/questions/{question['question_id']}", json={"answer": "moon"})
        assert (wrong.status_code, wrong.json()["code"]) == (422, "answer_invalid"), wrong.text
        assert "staging" in wrong.json()["message"]
        assert http.get(f"/api/v1/runs/{run_id}").json()["status"] == "waiting"  # it keeps waiting
        assert _execution(server, run_id)[0] == "RUNNING"

        answered = http.post(f"/api/v1/questions/{question['question_id']}", json={"answer": "production"})
        assert answered.status_code == 200, answered.text
        assert (answered.json()["status"], answered.json()["answer"]) == ("answered", "production")
        events = _events(http, run_id, to_end=True)
        again = http.post(f"/api/v1/questions/{question['question_id']}", json={"answer": "staging"})
        assert (again.status_code, again.json()["code"]) == (409, "question_already_answered")
        run = http.get(f"/api/v1/runs/{run_id}").json()

    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["outcome"] == {"type": "success"}
    said = next(e["value"] for e in events if e.get("name") == "question_answered")
    assert (said["status"], said["answer"]) == ("answered", "production")
    text = "".join(e.get("delta", "") for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == "Deploying build 42 to production."
    assert run["status"] == "succeeded"
    assert "production" in tool_results(fake.requests[-1]["messages"])
    status, history = _execution(server, run_id, ended=True)
    entered = [e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e]
    assert status == "SUCCEEDED" and "ApprovalTimedOut" not in entered and entered[-1] == "Done"


@pytest.mark.timeout(300)
def test_a_question_nobody_answers_takes_its_default_at_the_workflows_timeout(
    world: tuple[DevServer, FakeProvider],
) -> None:
    server, fake = world
    with httpx.Client(base_url=server.url, headers=server.auth, timeout=60) as http:
        run_id = _fire(http, _setup(http, server, fake, timeout=2))
        events = _events(http, run_id, to_end=True)
        questions = http.get("/api/v1/questions", params={"status": "answered"}).json()["items"]
        chat_id = http.get(f"/api/v1/runs/{run_id}").json()["chat_id"]
        transcript = http.get(f"/api/v1/chats/{chat_id}/messages").json()["items"]

    said = next(e["value"] for e in events if e.get("name") == "question_answered")
    assert (said["status"], said["answer"]) == ("answered", "staging")
    text = "".join(e.get("delta", "") for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == "Deploying build 42 to staging."
    mine = next(q for q in questions if q["run_id"] == run_id)
    assert (mine["answer"], mine["reason"]) == (
        "staging",
        "no answer before the question timed out: its default was taken",
    )
    _, history = _execution(server, run_id, ended=True)
    entered = [e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e]
    assert entered.index("WaitForApproval") < entered.index("ApprovalTimedOut")
    # After a reload the transcript shows the question with the answer the run went on with.
    calls = [c for item in transcript for c in item.get("tool_calls") or [] if c["name"] == "ask_user"]
    assert calls[-1]["question"]["question"] == "Which environment?"
    assert (calls[-1]["question"]["status"], calls[-1]["question"]["answer"]) == ("answered", "staging")


@pytest.mark.timeout(300)
def test_a_question_without_a_default_expires_at_the_timeout_and_a_late_answer_is_409(
    world: tuple[DevServer, FakeProvider],
) -> None:
    server, fake = world
    with httpx.Client(base_url=server.url, headers=server.auth, timeout=60) as http:
        workflow = _setup(http, server, fake, timeout=2, prompt="Pick a region for build {{body.build}}")
        run_id = _fire(http, workflow)
        events = _events(http, run_id, to_end=True)
        asked = next(e["value"] for e in events if e.get("name") == "question_asked")
        late = http.post(f"/api/v1/questions/{asked['question_id']}", json={"answer": "eu"})
        expired = http.get("/api/v1/questions", params={"status": "expired"}).json()["items"]
        run = http.get(f"/api/v1/runs/{run_id}").json()

    assert "default" not in asked or asked["default"] is None
    said = next(e["value"] for e in events if e.get("name") == "question_answered")
    assert (said["status"], said["answer"]) == ("expired", None)
    # The model is told nobody answered and goes on without it (as designed: no default, no guess).
    text = "".join(e.get("delta", "") for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == "No region was chosen for build 42: not deploying."
    assert "did not answer" in tool_results(fake.requests[-1]["messages"])[-1]
    assert run["status"] == "succeeded"
    assert (late.status_code, late.json()["code"]) == (409, "question_expired"), late.text
    mine = next(q for q in expired if q["run_id"] == run_id)
    assert (mine["id"], mine["status"], mine["answer"]) == (asked["question_id"], "expired", None)
    _, history = _execution(server, run_id, ended=True)
    entered = [e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e]
    assert entered.index("WaitForApproval") < entered.index("ApprovalTimedOut")
