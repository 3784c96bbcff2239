"""The Lambda events in tests/events/ have the shapes AWS sends: each one SAM can generate is held to
`sam local generate-event` (the SAM CLI of `make validate`, .tools/sam), and each one SAM has no generator for says
why. Shape: the envelope's keys and their types; the values of free-form maps (headers, claims, properties) are data."""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "tests" / "events"
SAM = ROOT / ".tools" / "sam" / "bin" / "sam"

# Our event file -> the SAM generator of the same event source.
SAM_GENERATED = {
    "api_healthz.json": ("apigateway", "http-api-proxy"),
    "channels_ses_receipt.json": ("ses", "email-receiving"),
    "api_me_with_jwt.json": ("apigateway", "http-api-proxy"),
    "api_readyz.json": ("apigateway", "http-api-proxy"),
    "api_webhook.json": ("apigateway", "http-api-proxy"),
    "platform_mcp_post.json": ("apigateway", "http-api-proxy"),
    "metering_scheduled.json": ("cloudwatch", "scheduled-event"),
    "migrate_create.json": ("cloudformation", "create-request"),
    "migrate_update.json": ("cloudformation", "create-request"),
    "migrate_delete.json": ("cloudformation", "create-request"),
}
# Events SAM has no generator for, and what defines their shape instead.
NOT_IN_SAM = {
    "steps_advance.json": "a Step Functions Task payload: the ASL's Parameters (tests/unit/test_template.py)",
    "steps_approval_timeout.json": "a Step Functions Task payload: the ASL's Parameters",
    "steps_await_approval.json": "a Step Functions Task payload: the ASL's Parameters",
    "steps_fail.json": "a Step Functions Task payload: the ASL's Parameters",
    "steps_await_children.json": "a Step Functions Task payload: the ASL's Parameters",
    "steps_ping.json": "a Step Functions Task payload: smoke.asl.json's Parameters",
    "scheduler_workflow.json": "an EventBridge Scheduler target's Input, which our schedules set",
    "run_worker_on_failure.json": "a Lambda on-failure destination record (no `sam local generate-event` source)",
}
# Maps whose keys are data (request headers, JWT claims, custom resource properties), not envelope.
FREE_FORM = {"headers", "pathParameters", "queryStringParameters", "stageVariables", "claims", "detail"}
FREE_FORM |= {"ResourceProperties", "OldResourceProperties"}
# What AWS leaves out when there is nothing to send (an HTTP API request without a body, cookies, query,
# authorizer or client certificate), and what AWS sends that SAM's samples leave out.
MAY_BE_ABSENT = {"body", "cookies", "pathParameters", "queryStringParameters", "stageVariables"}
MAY_BE_ABSENT |= {"requestContext.authentication", "requestContext.authorizer"}
AWS_SENDS_TOO = {"version", "ServiceToken", "PhysicalResourceId", "OldResourceProperties"}


def shape(value: Any, path: str = "") -> dict[str, str]:
    """Dotted key path -> JSON type name, not descending into free-form maps."""
    out: dict[str, str] = {}
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else key
            out[here] = "null" if item is None else type(item).__name__
            if key not in FREE_FORM:
                out |= shape(item, here)
    return out


@cache
def sam_event(service: str, event: str) -> dict[str, Any]:
    if not SAM.exists():
        pytest.fail(f"the SAM CLI is not installed at {SAM}; run `make validate`")
    env = os.environ | {"SAM_CLI_TELEMETRY": "0"}
    done = subprocess.run(
        [str(SAM), "local", "generate-event", service, event], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    generated: dict[str, Any] = json.loads(done.stdout)
    return generated


def test_every_event_file_is_held_to_sam_or_says_why_not() -> None:
    files = {p.name for p in EVENTS.glob("*.json")}
    unclassified = files - SAM_GENERATED.keys() - NOT_IN_SAM.keys()
    assert not unclassified, f"add these to SAM_GENERATED (with their generator) or NOT_IN_SAM: {sorted(unclassified)}"
    assert (SAM_GENERATED.keys() | NOT_IN_SAM.keys()) <= files, "an event listed here is gone from tests/events/"


@pytest.fixture(scope="module", autouse=True)
def _generate_in_parallel() -> None:
    """Each `sam` start costs over a second: generate the distinct events at once."""
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda source: sam_event(*source), sorted(set(SAM_GENERATED.values()))))


@pytest.mark.parametrize("name", sorted(SAM_GENERATED))
def test_the_event_has_the_shape_sam_generates(name: str) -> None:
    ours = shape(json.loads((EVENTS / name).read_text()))
    sams = shape(sam_event(*SAM_GENERATED[name]))
    missing = {k for k in sams.keys() - ours.keys() if not any(k == a or k.startswith(a + ".") for a in MAY_BE_ABSENT)}
    assert not missing, f"{name} lacks fields AWS sends: {sorted(missing)}"
    invented = {k for k in ours.keys() - sams.keys() if k.split(".")[0] not in AWS_SENDS_TOO}
    assert not invented, f"{name} has fields the event source does not send: {sorted(invented)}"
    mistyped = {k: (ours[k], sams[k]) for k in ours.keys() & sams.keys() if ours[k] != sams[k] and ours[k] != "null"}
    assert not mistyped, f"{name}: (ours, SAM's) types differ: {mistyped}"
