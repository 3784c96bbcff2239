"""template.yaml against approval escalation on AWS (issue 33 item 5): every function that can pause a run on an
approval knows where and how to schedule its escalation (the run recovery function, through a role that may invoke
only it, in the schedule group) and may create only escalation schedules and hand over only that role; the API,
which decides approvals, may delete them; the recovery handler is what the schedule's event reaches. No rate
schedule polls the database for escalations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from personal_agent.local.lambda_registry import load_template

ROOT = Path(__file__).resolve().parents[2]
RESOURCES: dict[str, Any] = load_template(ROOT / "template.yaml")["Resources"]
PAUSING = ["RunWorkerFunction", "StepsFunction", "ActivityPollerFunction"]


def _get_att(value: Any) -> str:
    att = value["Fn::GetAtt"]
    return att if isinstance(att, str) else ".".join(att)


def _statements(name: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for policy in RESOURCES[name]["Properties"]["Policies"]:
        if isinstance(policy, dict) and "Statement" in policy:
            found.extend(policy["Statement"])
    return found


@pytest.mark.parametrize("name", PAUSING + ["ApiFunction"])
def test_functions_that_pause_or_decide_know_the_escalation_target_and_role(name: str) -> None:
    env = RESOURCES[name]["Properties"]["Environment"]["Variables"]
    assert _get_att(env["PA_ESCALATION_TARGET_ARN"]) == "RunRecoveryFunction.Arn"
    assert _get_att(env["PA_ESCALATION_ROLE_ARN"]) == "EscalationSchedulerRole.Arn"
    assert env["PA_SCHEDULE_GROUP"] == {"Ref": "ScheduleGroup"}


@pytest.mark.parametrize("name", PAUSING)
def test_pausing_functions_create_only_escalation_schedules_and_pass_only_their_role(name: str) -> None:
    by_sid = {s.get("Sid"): s for s in _statements(name)}
    create = by_sid["ScheduleApprovalEscalations"]
    assert create["Action"] == "scheduler:CreateSchedule"
    assert create["Resource"]["Fn::Sub"].endswith(":schedule/${ScheduleGroup}/pa-esc-*")
    passing = by_sid["HandEscalationSchedulesTheirRole"]
    assert passing["Action"] == "iam:PassRole" and _get_att(passing["Resource"]) == "EscalationSchedulerRole.Arn"
    assert passing["Condition"]["StringEquals"]["iam:PassedToService"] == "scheduler.amazonaws.com"


def test_the_api_may_delete_the_group_s_schedules() -> None:
    by_sid = {s.get("Sid"): s for s in _statements("ApiFunction")}
    manage = by_sid["ManageWorkflowSchedules"]
    assert "scheduler:DeleteSchedule" in manage["Action"]
    assert manage["Resource"]["Fn::Sub"].endswith(":schedule/${ScheduleGroup}/*")


def test_the_escalation_role_is_for_scheduler_and_invokes_only_run_recovery() -> None:
    role = RESOURCES["EscalationSchedulerRole"]["Properties"]
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "scheduler.amazonaws.com"}
    statements = [s for p in role["Policies"] for s in p["PolicyDocument"]["Statement"]]
    assert [s["Action"] for s in statements] == ["lambda:InvokeFunction"]
    assert _get_att(statements[0]["Resource"][0]) == "RunRecoveryFunction.Arn"
    assert statements[0]["Resource"][1] == {"Fn::Sub": "${RunRecoveryFunction.Arn}:*"}


def test_run_recovery_can_queue_the_admins_push_and_nothing_polls_for_escalations() -> None:
    recovery = RESOURCES["RunRecoveryFunction"]["Properties"]
    assert recovery["Handler"] == "app.handler" and recovery["CodeUri"] == "functions/run_recovery/"
    queues = [p["SQSSendMessagePolicy"]["QueueName"] for p in recovery["Policies"] if "SQSSendMessagePolicy" in p]
    assert {"Fn::GetAtt": "OutputQueue.QueueName"} in queues or {"Fn::GetAtt": ["OutputQueue", "QueueName"]} in queues
    assert "Events" not in recovery  # no rate schedule: the one-time schedules are the only callers
