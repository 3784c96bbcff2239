"""The durable tests' two AWS emulators: moto (the session stack; Tasks invoke the steps handler as Lambda) and
LocalStack (started once per session on a free port; Tasks are Step Functions Activities that a worker in this
process polls, with the same handler). `durable_aws` runs a test on both; the LocalStack leg carries the
`localstack` mark and errors, never skips, when LocalStack is not installed (`make localstack`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import boto3
import pytest


@dataclass
class Emulator:
    """Where a durable test's Step Functions calls go, and the ASL substitutions of its task mode."""

    name: str
    endpoint_url: str
    state_machines: dict[str, str]
    substitutions: dict[str, str]
    worker: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    def sfn(self) -> Any:
        return boto3.client("stepfunctions", endpoint_url=self.endpoint_url, region_name="us-east-1")


def _moto(stack: Any) -> Emulator:
    from personal_agent.local.aws import local_substitutions
    from personal_agent.local.stack import LOCAL_ASL_PARAMETERS

    endpoint = os.environ["AWS_ENDPOINT_URL"]
    machines = {sm["name"].removeprefix("pa-"): sm["stateMachineArn"] for sm in _list(endpoint)}
    return Emulator("moto", endpoint, machines, local_substitutions(stack.registry, extra=LOCAL_ASL_PARAMETERS))


def _list(endpoint: str) -> list[dict[str, Any]]:
    client = boto3.client("stepfunctions", endpoint_url=endpoint, region_name="us-east-1")
    return [sm for page in client.get_paginator("list_state_machines").paginate() for sm in page["stateMachines"]]


@pytest.fixture(scope="session")
def localstack_aws(stack: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    """LocalStack once per session, the state machines provisioned in activity mode, and the steps activity's
    worker running the registry's handlers in this process (as moto's Lambda dispatch does)."""
    from personal_agent.local.aws import STATE_MACHINES_DIR, ensure_state_machine, local_substitutions, render_asl
    from personal_agent.local.localstack import (
        LocalStackServer,
        activity_substitutions,
        ensure_activity,
        start_activity_worker,
    )
    from personal_agent.local.ports import free_port
    from personal_agent.local.stack import LOCAL_ASL_PARAMETERS

    server = LocalStackServer(free_port(), tmp_path_factory.mktemp("localstack")).start()
    try:
        sfn = boto3.client("stepfunctions", endpoint_url=server.endpoint_url, region_name="us-east-1")
        activity = ensure_activity(sfn, "pa-steps")
        subs = local_substitutions(stack.registry, extra=LOCAL_ASL_PARAMETERS | activity_substitutions(activity))
        machines = {
            path.name.removesuffix(".asl.json"): ensure_state_machine(
                sfn, f"pa-{path.name.removesuffix('.asl.json')}", render_asl(path, subs)
            )
            for path in sorted(STATE_MACHINES_DIR.glob("*.asl.json"))
        }
        worker = start_activity_worker(server.endpoint_url, "us-east-1", activity, stack.registry)
        try:
            yield Emulator("localstack", server.endpoint_url, machines, subs, worker, {"activity": activity})
        finally:
            worker.stop()
    finally:
        server.stop()


@pytest.fixture(params=["moto", pytest.param("localstack", marks=pytest.mark.localstack)])
def durable_aws(request: pytest.FixtureRequest, stack: Any, monkeypatch: pytest.MonkeyPatch) -> Emulator:
    """Run the test once on moto (lambda:invoke Tasks) and once on LocalStack (activity Tasks): the app's Step
    Functions client, `AWS_ENDPOINT_URL` and the state machine ARN point at the emulator for the test."""
    from personal_agent.settings import get_settings

    if request.param == "moto":
        return _moto(stack)
    emulator: Emulator = request.getfixturevalue("localstack_aws")
    settings = get_settings()
    monkeypatch.setattr(settings, "aws_endpoint_url", emulator.endpoint_url)
    monkeypatch.setattr(settings, "state_machine_arn", emulator.state_machines["agent_run"])
    monkeypatch.setenv("AWS_ENDPOINT_URL", emulator.endpoint_url)
    monkeypatch.setenv("PA_STATE_MACHINE_ARN", emulator.state_machines["agent_run"])
    return emulator
