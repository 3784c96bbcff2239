"""template.yaml against data exports and retention on AWS (issue 38): a daily EventBridge Scheduler schedule gives
the data jobs function the retention event (through a role that may invoke only it); the API hands exports to that
function (its name in the environment, invoke permission) and signs their downloads; the function may write and
delete only under `exports/`, where a lifecycle rule is the backstop for the sweep."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from uuid import uuid4

from personal_agent.lifecycle.data_exports import object_key
from personal_agent.lifecycle.data_retention import RETENTION_SOURCE
from personal_agent.local.lambda_registry import load_template

ROOT = Path(__file__).resolve().parents[2]
RESOURCES: dict[str, Any] = load_template(ROOT / "template.yaml")["Resources"]


def _get_att(value: Any) -> str:
    att = value["Fn::GetAtt"]
    return att if isinstance(att, str) else ".".join(att)


def _statements(name: str) -> list[dict[str, Any]]:
    return [s for p in RESOURCES[name]["Properties"]["Policies"] if isinstance(p, dict) for s in p.get("Statement", [])]


def test_a_daily_schedule_gives_the_data_jobs_function_the_retention_event() -> None:
    schedule = RESOURCES["RetentionSchedule"]
    assert schedule["Type"] == "AWS::Scheduler::Schedule"
    props = schedule["Properties"]
    assert re.fullmatch(r"cron\(\d{1,2} \d{1,2} \* \* \? \*\)", props["ScheduleExpression"])  # once a day
    assert props["GroupName"] == {"Ref": "ScheduleGroup"} and props["State"] == "ENABLED"
    target = props["Target"]
    assert _get_att(target["Arn"]) == "DataJobsFunction.Arn"
    assert _get_att(target["RoleArn"]) == "RetentionSchedulerRole.Arn"
    assert json.loads(target["Input"]) == {"source": RETENTION_SOURCE}


def test_the_retention_role_is_for_scheduler_and_invokes_only_the_data_jobs_function() -> None:
    role = RESOURCES["RetentionSchedulerRole"]["Properties"]
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "scheduler.amazonaws.com"}
    statements = [s for p in role["Policies"] for s in p["PolicyDocument"]["Statement"]]
    assert [s["Action"] for s in statements] == ["lambda:InvokeFunction"]
    assert _get_att(statements[0]["Resource"][0]) == "DataJobsFunction.Arn"


def test_the_api_hands_exports_to_the_data_jobs_function_and_signs_their_downloads() -> None:
    api = RESOURCES["ApiFunction"]["Properties"]
    assert api["Environment"]["Variables"]["PA_EXPORT_FUNCTION"] == {"Ref": "DataJobsFunction"}
    invokes = [p["LambdaInvokePolicy"]["FunctionName"] for p in api["Policies"] if "LambdaInvokePolicy" in p]
    assert {"Ref": "DataJobsFunction"} in invokes
    by_sid = {s.get("Sid"): s for s in _statements("ApiFunction")}
    download = by_sid["DataExportsDownloadAndExpiry"]
    assert "s3:GetObject" in download["Action"]
    assert download["Resource"] == {"Fn::Sub": "${DocumentsBucket.Arn}/exports/*"}


def test_the_data_jobs_function_writes_only_exports() -> None:
    function = RESOURCES["DataJobsFunction"]["Properties"]
    assert function["CodeUri"] == "functions/data_jobs/" and function["Handler"] == "app.handler"
    assert function["Timeout"] == 900  # an export of a long history takes its time; nothing waits on it
    writes = [s for s in _statements("DataJobsFunction") if "s3:PutObject" in s["Action"]]
    assert [w["Resource"] for w in writes] == [{"Fn::Sub": "${DocumentsBucket.Arn}/exports/*"}]
    assert object_key(uuid4(), uuid4()).startswith("exports/")  # where the policy lets it write


def test_a_lifecycle_rule_is_the_backstop_for_expired_exports() -> None:
    rules = RESOURCES["DocumentsBucket"]["Properties"]["LifecycleConfiguration"]["Rules"]
    (rule,) = [r for r in rules if r.get("Prefix") == "exports/"]
    assert rule["Status"] == "Enabled" and rule["ExpirationInDays"] <= 2
    assert rule["NoncurrentVersionExpiration"]["NoncurrentDays"] <= 1
