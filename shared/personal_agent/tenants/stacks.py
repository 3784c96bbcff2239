"""The tenants' stacks in CloudFormation, found by their `pa:tenant` tag, and change sets on them."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from personal_agent.aws_clients import aws_client_at

TENANT_TAG = "pa:tenant"
VERSION_TAG = "pa:version"
CAPABILITIES = ["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"]
NO_CHANGES = ("didn't contain changes", "No updates are to be performed")


def cloudformation(region: str | None) -> Any:
    """A CloudFormation client of the region; AWS_ENDPOINT_URL points it at an emulator."""
    return aws_client_at("cloudformation", None, region)


def s3_client(region: str | None) -> Any:
    return aws_client_at("s3", None, region)


def tenant_stacks(client: Any) -> dict[str, dict[str, Any]]:
    """tenant -> its live stack (as describe_stacks gives it), for every stack tagged `pa:tenant`."""
    found: dict[str, dict[str, Any]] = {}
    for page in client.get_paginator("describe_stacks").paginate():
        for stack in page["Stacks"]:
            tags = {t["Key"]: t["Value"] for t in stack.get("Tags", [])}
            if TENANT_TAG in tags and stack["StackStatus"] not in ("DELETE_COMPLETE", "REVIEW_IN_PROGRESS"):
                found[tags[TENANT_TAG]] = stack
    return found


@dataclass
class ChangeSet:
    """A change set made for one stack: its id, whether it changes anything, and what it changes."""

    id: str
    stack_id: str
    kind: str
    changes: list[dict[str, Any]] = field(default_factory=list)
    empty: bool = False
    failure: str = ""


def create_change_set(
    client: Any,
    stack_name: str,
    template: dict[str, str],
    parameters: dict[str, str],
    tags: dict[str, str],
    exists: bool,
    name: str,
    poll_seconds: float,
) -> ChangeSet:
    """Create a change set and wait until CloudFormation has computed it."""
    made = client.create_change_set(
        StackName=stack_name,
        ChangeSetName=name,
        ChangeSetType="UPDATE" if exists else "CREATE",
        Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in sorted(parameters.items())],
        Capabilities=CAPABILITIES,
        Tags=[{"Key": k, "Value": v} for k, v in sorted(tags.items())],
        **template,
    )
    change_set = ChangeSet(made["Id"], made["StackId"], "UPDATE" if exists else "CREATE")
    while True:
        described = client.describe_change_set(ChangeSetName=change_set.id, StackName=stack_name)
        status, reason = described["Status"], described.get("StatusReason", "")
        if status == "FAILED":
            change_set.empty = any(text in reason for text in NO_CHANGES)
            change_set.failure = "" if change_set.empty else reason
            return change_set
        if status == "CREATE_COMPLETE":
            change_set.changes = [c["ResourceChange"] for c in described.get("Changes", []) if "ResourceChange" in c]
            return change_set
        time.sleep(poll_seconds)


def wait_for_stack(client: Any, stack_id: str, poll_seconds: float) -> dict[str, Any]:
    """The stack once no operation is in progress on it."""
    while True:
        stack: dict[str, Any] = client.describe_stacks(StackName=stack_id)["Stacks"][0]
        if not stack["StackStatus"].endswith("_IN_PROGRESS"):
            return stack
        time.sleep(poll_seconds)
