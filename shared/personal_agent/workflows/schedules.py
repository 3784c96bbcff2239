"""A workflow's schedule: its row (what the local scheduler reads) and its EventBridge Scheduler schedule
(what fires on AWS), kept in step by the workflow API. boto3 is imported only when a schedule changes."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from personal_agent.aws_clients import aws_client
from personal_agent.db.pool import Conn
from personal_agent.errors import Conflict, InvalidInput
from personal_agent.settings import get_settings
from personal_agent.workflows import schedule_store
from personal_agent.workflows.schedule_expressions import next_fires, parse_schedule

SCHEDULE_SOURCE = "pa.schedule"
_groups_checked: set[str] = set()


@dataclass(frozen=True)
class ScheduleSpec:
    expression: str
    timezone: str = "UTC"
    enabled: bool = True


def schedule_name(workflow_id: UUID) -> str:
    return f"pa-wf-{workflow_id}"


def target_input(org_id: UUID, workflow_id: UUID) -> str:
    """What the triggers function receives: pointers, and the fire's context that Scheduler fills in."""
    return json.dumps(
        {
            "source": SCHEDULE_SOURCE,
            "workflow_id": str(workflow_id),
            "org_id": str(org_id),
            "schedule_arn": "<aws.scheduler.schedule-arn>",
            "scheduled_time": "<aws.scheduler.scheduled-time>",
            "execution_id": "<aws.scheduler.execution-id>",
            "attempt": "<aws.scheduler.attempt-number>",
        }
    )


def scheduler_client() -> Any:
    return aws_client("scheduler")


def _target(org_id: UUID, workflow_id: UUID) -> dict[str, Any]:
    settings = get_settings()
    arn, role = settings.schedule_target_arn, settings.scheduler_role_arn  # `pa dev`: set by the local stack
    if not arn or not role:
        raise Conflict(
            "schedules are not available: PA_SCHEDULE_TARGET_ARN and PA_SCHEDULER_ROLE_ARN are not set",
            code="schedules_unavailable",
        )
    target: dict[str, Any] = {
        "Arn": arn,
        "RoleArn": role,
        "Input": target_input(org_id, workflow_id),
        "RetryPolicy": {"MaximumEventAgeInSeconds": 3600, "MaximumRetryAttempts": 3},
    }
    if settings.schedule_dlq_arn:
        target["DeadLetterConfig"] = {"Arn": settings.schedule_dlq_arn}
    return target


def _ensure_local_group(client: Any, group: str) -> None:
    """Locally the group is made on first use (on AWS the template owns it)."""
    if group in _groups_checked or not get_settings().is_local:
        return
    try:
        client.get_schedule_group(Name=group)
    except client.exceptions.ResourceNotFoundException:
        client.create_schedule_group(Name=group)
    _groups_checked.add(group)


def put_aws_schedule(org_id: UUID, workflow_id: UUID, spec: ScheduleSpec) -> None:
    """Create or update the workflow's EventBridge schedule (blocking)."""
    client = scheduler_client()
    group = get_settings().schedule_group
    _ensure_local_group(client, group)
    args = {
        "Name": schedule_name(workflow_id),
        "GroupName": group,
        "ScheduleExpression": spec.expression,
        "ScheduleExpressionTimezone": spec.timezone,
        "FlexibleTimeWindow": {"Mode": "OFF"},
        "Target": _target(org_id, workflow_id),
        "State": "ENABLED" if spec.enabled else "DISABLED",
        "Description": f"Personal Agent workflow {workflow_id}",
    }
    try:
        client.update_schedule(**args)
    except client.exceptions.ResourceNotFoundException:
        client.create_schedule(**args)


def delete_aws_schedule(workflow_id: UUID) -> None:
    """Delete the workflow's EventBridge schedule (blocking); one that is already gone is fine."""
    client = scheduler_client()
    try:
        client.delete_schedule(Name=schedule_name(workflow_id), GroupName=get_settings().schedule_group)
    except client.exceptions.ResourceNotFoundException:
        pass


async def save_schedule(conn: Conn, org_id: UUID, workflow_id: UUID, spec: ScheduleSpec) -> None:
    """Store the schedule (next fire time from now) and mirror it to EventBridge Scheduler, inside the
    caller's transaction: if AWS refuses, nothing is stored."""
    now = datetime.now(UTC)
    next_fire = parse_schedule(spec.expression, spec.timezone).next_after(now, anchor=now)
    await schedule_store.put(conn, org_id, workflow_id, spec.expression, spec.timezone, spec.enabled, now, next_fire)
    try:
        await asyncio.to_thread(put_aws_schedule, org_id, workflow_id, spec)
    except Exception as exc:
        error = getattr(exc, "response", None) or {}
        if error.get("Error", {}).get("Code") != "ValidationException":
            raise
        # Our parser and Scheduler disagree on an expression: the caller's input, so a 422, not a 500.
        message = str(error["Error"].get("Message") or "refused by EventBridge Scheduler")[:300]
        raise InvalidInput(f"invalid schedule: {message}", code="invalid_schedule_expression") from None


async def remove_schedule(conn: Conn, workflow_id: UUID) -> None:
    await schedule_store.delete(conn, workflow_id)
    await asyncio.to_thread(delete_aws_schedule, workflow_id)


def preview(
    saved: schedule_store.Schedule | None, expression: str | None, timezone: str | None, count: int
) -> dict[str, Any]:
    """When a schedule fires next, `count` times from now (fewer if it stops): `expression` as it would if saved
    now, or the workflow's `saved` schedule when none is sent (none saved: no fire times). A rate counts from the
    saved schedule's next fire time, or from now for one not saved yet (as saving it would). 422
    `invalid_schedule_expression`, `invalid_timezone`."""
    timezone = timezone or (saved.timezone if saved is not None else "UTC")
    if expression is None:
        if saved is None:
            return {"expression": None, "timezone": timezone, "next_fires": []}
        expression = saved.expression
    now = datetime.now(UTC)
    is_saved = saved is not None and (saved.expression, saved.timezone) == (expression.strip(), timezone)
    anchor = saved.next_fire_at if saved is not None and is_saved else None
    fires = next_fires(parse_schedule(expression, timezone), now, count, anchor=anchor or now)
    return {"expression": expression.strip(), "timezone": timezone, "next_fires": fires}
