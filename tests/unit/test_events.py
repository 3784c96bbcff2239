"""The event JSON under tests/events/ matches what AWS sends this stack: the state machine's Task payloads
and the HTTP API's routes as template.yaml and the ASL declare them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from personal_agent.local.lambda_registry import load_template
from personal_agent.local.stack import LOCAL_ASL_PARAMETERS
from tests.lambda_context import EVENTS, FakeLambdaContext, load_event

ROOT = Path(__file__).resolve().parents[2]
ASL = ROOT / "infra" / "statemachines" / "agent_run.asl.json"


def _steps_payloads() -> dict[str, set[str]]:
    """action -> payload keys of every Task that invokes the steps function."""
    payloads: dict[str, set[str]] = {}
    # Numeric substitutions (`"TimeoutSeconds": ${StepTimeoutSeconds}`) make the raw file invalid JSON.
    # The events are lambda mode's payloads (the default): its key for the callback token.
    text = ASL.read_text().replace("${TaskTokenKey}", LOCAL_ASL_PARAMETERS["TaskTokenKey"])
    text = re.sub(r'(?<!")\$\{\w+\}(?!")', "0", text)
    for state in json.loads(text)["States"].values():
        params = state.get("Parameters", {})
        if state.get("Type") == "Task" and params.get("FunctionName") == "${StepsFunctionArn}":
            payload = params["Payload"]
            payloads[payload["action"]] = {key.removesuffix(".$") for key in payload}
    return payloads


def test_there_is_an_event_for_every_step_the_state_machine_invokes() -> None:
    for action, keys in _steps_payloads().items():
        event = load_event(f"steps_{action}.json")
        assert set(event) == keys, f"steps_{action}.json does not match the {action} Task's payload"


@pytest.mark.parametrize("path", sorted(EVENTS.glob("steps_*.json")), ids=lambda p: p.name)
def test_step_events_are_small_pointers(path: Path) -> None:
    event = json.loads(path.read_text())
    assert all(isinstance(value, str) and len(value) <= 2048 for value in event.values()), "only flat ids and tokens"


def test_api_events_use_routes_the_template_declares() -> None:
    template = load_template(ROOT / "template.yaml")
    routes = {
        f"{event['Properties']['Method']} {event['Properties']['Path']}"
        for resource in template["Resources"].values()
        if resource["Type"] == "AWS::Serverless::Function"
        for event in resource["Properties"].get("Events", {}).values()
        if event["Type"] == "HttpApi"
    }
    for path in sorted(EVENTS.glob("api_*.json")):
        event: dict[str, Any] = json.loads(path.read_text())
        assert event["version"] == "2.0" and event["routeKey"] in routes, path.name
        assert event["requestContext"]["http"]["path"] == event["rawPath"], path.name


def test_the_steps_handler_answers_a_ping_task_under_a_lambda_context() -> None:
    from functions.steps.app import handler

    result = handler(load_event("steps_ping.json"), FakeLambdaContext(function_name="personal-agent-steps"))
    assert result["ok"] is True and result["execution"] == "smoke-0123abcd"


def test_the_scheduler_event_is_what_workflow_schedules_send() -> None:
    import uuid

    from personal_agent.workflows.schedules import SCHEDULE_SOURCE, target_input

    sent = json.loads(target_input(uuid.uuid4(), uuid.uuid4()))
    event = load_event("scheduler_workflow.json")
    assert set(event) == set(sent) and event["source"] == SCHEDULE_SOURCE
