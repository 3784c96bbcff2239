"""On AWS an approval that can escalate gets a one-time EventBridge Scheduler schedule at its `escalate_at`: it
invokes the run recovery function with `{"source": "pa.escalation", ...}`, which runs the escalation sweep
(`lifecycle/approval_escalation.escalate_due`). Nothing polls: the database is touched only when an approval
that can escalate reaches its time. The schedule deletes itself after it fired (`ActionAfterCompletion`), and a
decision deletes it before. Without `PA_ESCALATION_TARGET_ARN`/`PA_ESCALATION_ROLE_ARN` (`pa dev`, whose
`EscalationLoop` sweeps instead) nothing is scheduled. boto3 is imported only when a schedule changes."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from uuid import UUID

from personal_agent.aws_clients import aws_client
from personal_agent.settings import get_settings

ESCALATION_SOURCE = "pa.escalation"
log = logging.getLogger("personal_agent.approvals.escalation_schedule")


def schedule_name(approval_id: UUID) -> str:
    return f"pa-esc-{approval_id}"


def at_expression(when: datetime) -> str:
    """Scheduler's one-time expression, in UTC, rounded up to the next whole second (never before `when`)."""
    when = when.astimezone(UTC)
    if when.microsecond:
        when = when.replace(microsecond=0) + timedelta(seconds=1)
    return f"at({when.strftime('%Y-%m-%dT%H:%M:%S')})"


def target_input(org_id: UUID, approval_id: UUID) -> str:
    return json.dumps({"source": ESCALATION_SOURCE, "org_id": str(org_id), "approval_id": str(approval_id)})


def enabled() -> bool:
    settings = get_settings()
    return bool(settings.escalation_target_arn and settings.escalation_role_arn)


def put_schedule(org_id: UUID, approval_id: UUID, when: datetime) -> bool:
    """Create the approval's one-time schedule (blocking); False when escalation is not scheduled here."""
    settings = get_settings()
    if not enabled():
        return False
    aws_client("scheduler").create_schedule(
        Name=schedule_name(approval_id),
        GroupName=settings.schedule_group,
        ScheduleExpression=at_expression(when),
        ScheduleExpressionTimezone="UTC",
        FlexibleTimeWindow={"Mode": "OFF"},
        ActionAfterCompletion="DELETE",
        Target={
            "Arn": settings.escalation_target_arn,
            "RoleArn": settings.escalation_role_arn,
            "Input": target_input(org_id, approval_id),
            "RetryPolicy": {"MaximumEventAgeInSeconds": 3600, "MaximumRetryAttempts": 3},
        },
        Description=f"Personal Agent approval {approval_id}: escalate to the org admins",
    )
    return True


def delete_schedule(approval_id: UUID) -> None:
    """Delete the approval's schedule (blocking) once it is decided; one that fired or never existed is fine, and
    a failure only logs (the sweep it would run finds nothing to escalate)."""
    if not enabled():
        return
    client = aws_client("scheduler")
    try:
        client.delete_schedule(Name=schedule_name(approval_id), GroupName=get_settings().schedule_group)
    except client.exceptions.ResourceNotFoundException:
        pass
    except Exception:
        log.warning(
            "an escalation schedule could not be deleted", extra={"approval_id": str(approval_id)}, exc_info=True
        )
