"""Activity mode's AWS worker (`functions/activity_poller`, `poll_scheduled`) against LocalStack: it takes a task of
its activity, runs it with the steps handler, and stops polling once its invocation has no time left to finish one."""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

import pytest

from personal_agent.lifecycle.activity_worker import poll_scheduled
from personal_agent.lifecycle.durable_steps import handle_step
from personal_agent.local.aws import STATE_MACHINES_DIR, render_asl
from personal_agent.local.localstack import activity_substitutions
from personal_agent.settings import get_settings
from tests.emulators import Emulator
from tests.sfn import wait_for_execution


@pytest.mark.localstack
def test_the_scheduled_poller_runs_a_task_and_stops_when_its_time_is_short(
    localstack_aws: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    sfn = localstack_aws.sfn()
    # Its own activity: the session's worker polls the shared one.
    activity = sfn.create_activity(name=f"poller-{uuid.uuid4().hex[:8]}")["activityArn"]
    definition = render_asl(
        STATE_MACHINES_DIR / "smoke.asl.json", localstack_aws.substitutions | activity_substitutions(activity)
    )
    machine = sfn.create_state_machine(
        name=f"poller-{uuid.uuid4().hex[:8]}", definition=definition, roleArn="arn:aws:iam::000000000000:role/x"
    )
    execution = sfn.start_execution(stateMachineArn=machine["stateMachineArn"], name="poll-me", input="{}")
    settings = get_settings()
    for name, value in (
        ("steps_activity_arn", activity),
        ("step_timeout_seconds", 300.0),
        ("activity_worker_threads", 1),
        ("aws_endpoint_url", localstack_aws.endpoint_url),
    ):
        monkeypatch.setattr(settings, name, value)
    ran: list[dict[str, Any]] = []

    def runner(event: dict[str, Any], function: str | None) -> dict[str, Any]:
        ran.append(event)
        return handle_step(event)

    # The invocation's clock: 15 minutes left until a task ran, then less than a step timeout plus a poll.
    tasks = poll_scheduled(lambda: 299_000 if ran else 900_000, runner)
    assert tasks == 1 and ran == [{"action": "ping", "execution": "poll-me"}]
    result = wait_for_execution(sfn, execution["executionArn"])
    assert result["status"] == "SUCCEEDED"
    assert json.loads(result["output"]) == {"ok": True, "action": "ping", "execution": "poll-me", "pid": os.getpid()}


def test_the_poller_refuses_to_run_without_its_activity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(get_settings(), "steps_activity_arn", None)
    with pytest.raises(RuntimeError, match="PA_STEPS_ACTIVITY_ARN"):
        poll_scheduled(lambda: 900_000, lambda event, function: {})
