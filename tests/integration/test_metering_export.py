"""The metering export, run by its Lambda handler on scheduled events against the embedded Postgres and moto's
S3 and EventBridge (a rule on the operator's bus forwards the events to an SQS queue the test reads)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import psycopg
import pytest

from functions.metering.app import handler
from personal_agent.metering.config import MeteringConfig
from personal_agent.metering.export import export_period
from personal_agent.metering.periods import period_of
from personal_agent.metering.platform_cost import PlatformRates
from personal_agent.metering.publish import OperatorPublisher
from personal_agent.runtime import run_sync
from tests.conftest import Tenant
from tests.lambda_context import FakeLambdaContext, load_event


@dataclass
class Operator:
    bucket: str
    bus_arn: str
    queue_url: str
    prefix: str

    def objects(self) -> dict[str, dict[str, Any]]:
        """key -> {etag, lines} of every export object."""
        s3 = boto3.client("s3")
        found = {}
        for item in s3.list_objects_v2(Bucket=self.bucket, Prefix=self.prefix).get("Contents", []):
            body = s3.get_object(Bucket=self.bucket, Key=item["Key"])["Body"].read().decode()
            found[item["Key"]] = {"etag": item["ETag"], "lines": [json.loads(x) for x in body.splitlines()]}
        return found

    def drain_events(self) -> list[dict[str, Any]]:
        sqs, events = boto3.client("sqs"), []
        while True:
            got = sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10).get("Messages", [])
            if not got:
                return events
            for message in got:
                events.append(json.loads(message["Body"]))
                sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])


@pytest.fixture
def operator(stack: object, monkeypatch: pytest.MonkeyPatch) -> Iterator[Operator]:
    """The operator's bucket and bus (a rule forwards metering events to a queue), and the stack's settings."""
    suffix = uuid.uuid4().hex[:8]
    bucket, bus = f"pa-operator-{suffix}", f"pa-operator-{suffix}"
    boto3.client("s3").create_bucket(Bucket=bucket)
    events, sqs = boto3.client("events"), boto3.client("sqs")
    bus_arn = events.create_event_bus(Name=bus)["EventBusArn"]
    queue_url = sqs.create_queue(QueueName=f"metering-{suffix}")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name="metering", EventBusName=bus, EventPattern=json.dumps({"source": ["personal-agent.metering"]}))
    events.put_targets(Rule="metering", EventBusName=bus, Targets=[{"Id": "queue", "Arn": queue_arn}])
    for name, value in {
        "PA_TENANT_ID": "acme",
        "PA_STAGE": "prod",
        "PA_METERING_BUCKET": bucket,
        "PA_METERING_BUS_ARN": bus_arn,
        "PA_METERING_PREFIX": "metering/",
    }.items():
        monkeypatch.setenv(name, value)
    yield Operator(bucket, bus_arn, queue_url, "metering/acme/prod/")


def _record_run(
    admin_url: str, tenant: Tenant, mode: str, at: str, requests: list[tuple[str, int, int, str | None]]
) -> uuid.UUID:
    """A run started at `at` and its ledger rows: (model, input tokens, output tokens, cost or None)."""
    run_id = uuid.uuid4()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO runs (id, org_id, user_id, status, mode, spec, created_at)"
            " VALUES (%s, %s, %s, 'succeeded', %s, '{}', %s)",
            [run_id, tenant.org_id, tenant.user_id, mode, at],
        )
        for index, (model, tokens_in, tokens_out, cost) in enumerate(requests):
            conn.execute(
                "INSERT INTO usage_records (org_id, run_id, request_index, user_id, model_name, provider,"
                " input_tokens, output_tokens, cost_usd, created_at)"
                " VALUES (%s, %s, %s, %s, %s, 'test', %s, %s, %s, %s::timestamptz + %s * interval '1 second')",
                [tenant.org_id, run_id, index, tenant.user_id, model, tokens_in, tokens_out, cost, at, index],
            )
    return run_id


def _ledger(admin_url: str, orgs: list[Tenant], since: str, until: str) -> dict[tuple[str, str], dict[str, Any]]:
    """What the ledger holds per org and model in [since, until)."""
    slugs = {t.org_id: t.slug for t in orgs}
    with psycopg.connect(admin_url) as conn:
        rows = conn.execute(
            "SELECT org_id, model_name, count(*), sum(input_tokens), sum(output_tokens), sum(cost_usd)"
            " FROM usage_records WHERE org_id = ANY(%s) AND created_at >= %s AND created_at < %s"
            " GROUP BY 1, 2",
            [list(slugs), since, until],
        ).fetchall()
    return {
        (slugs[r[0]], r[1]): {
            "requests": r[2],
            "input_tokens": int(r[3]),
            "output_tokens": int(r[4]),
            "cost_usd": round(float(r[5] or 0), 8),
        }
        for r in rows
    }


def _usage_lines(objects: dict[str, dict[str, Any]], orgs: list[Tenant]) -> list[tuple[str, dict[str, Any]]]:
    slugs = {t.slug for t in orgs}
    return [
        (key, line)
        for key, obj in objects.items()
        for line in obj["lines"]
        if line["type"] == "usage" and line["org"] in slugs
    ]


def _figures(line: dict[str, Any]) -> dict[str, Any]:
    return {k: line[k] for k in ("requests", "input_tokens", "output_tokens", "cost_usd")}


def test_a_runs_usage_is_exported_once_in_its_period_and_a_redelivery_changes_nothing(
    operator: Operator, admin_url: str, make_tenant: Any
) -> None:
    acme, globex = make_tenant(), make_tenant()
    _record_run(
        admin_url,
        acme,
        "inline",
        "2020-03-04T05:10:00Z",
        [("gpt-x", 1200, 300, "0.0012"), ("claude-y", 800, 90, "0.003")],
    )
    _record_run(admin_url, globex, "durable", "2020-03-04T05:40:00Z", [("local-z", 50, 20, None)])

    event = load_event("metering_scheduled.json")  # 2020-03-04T07:30Z: hours up to 06 are closed, 07 is not
    first = handler(event, FakeLambdaContext(function_name="pa-acme-prod-MeteringFunction"))
    assert {"hour:2020-03-04T05", "hour:2020-03-04T06", "month:2020-02"} <= set(first["exported"])
    assert "hour:2020-03-04T07" not in first["exported"] and "month:2020-03" not in first["exported"]

    objects = operator.objects()
    hour_key = "metering/acme/prod/hour/2020-03-04T05.jsonl"
    expected = _ledger(admin_url, [acme, globex], "2020-03-04T05:00Z", "2020-03-04T06:00Z")
    lines = _usage_lines(objects, [acme, globex])
    assert sorted((k, line["org"], line["model"]) for k, line in lines) == sorted(
        (hour_key, org, model) for org, model in expected
    ), "each org's usage per model appears once, in its own hour's object"
    for _, line in lines:
        assert _figures(line) == expected[(line["org"], line["model"])]
    runs = {line["org"]: line for line in objects[hour_key]["lines"] if line["type"] == "runs"}
    assert (runs[acme.slug]["runs"], runs[acme.slug]["durable_runs"]) == (1, 0)
    assert (runs[globex.slug]["runs"], runs[globex.slug]["durable_runs"], runs[globex.slug]["unpriced_requests"]) == (
        1,
        1,
        1,
    )
    rates = PlatformRates()
    assert runs[acme.slug]["platform_cost_usd"] == rates.estimate(
        runs=1, durable_runs=0, model_requests=2, output_tokens=390
    )

    events = operator.drain_events()
    assert len(events) == len(first["exported"])
    assert all(e["source"] == "personal-agent.metering" for e in events)
    in_events = [
        (e["detail"]["label"], u["org"], u["model"], _figures(u))
        for e in events
        for u in e["detail"]["usage"]
        if u["org"] in {acme.slug, globex.slug}
    ]
    assert sorted(in_events) == sorted(("2020-03-04T05", org, model, fig) for (org, model), fig in expected.items())
    hour_event = next(e for e in events if e["detail"]["label"] == "2020-03-04T05")
    assert hour_event["detail"]["object"] == {"bucket": operator.bucket, "key": hour_key}
    assert hour_event["detail"]["export_id"] == objects[hour_key]["lines"][0]["export_id"]

    # The same scheduled event delivered again: nothing is written or sent twice.
    again = handler(event, FakeLambdaContext(function_name="pa-acme-prod-MeteringFunction"))
    assert again["exported"] == []
    assert operator.objects() == objects
    assert operator.drain_events() == []

    # A run recorded at 07:45 and an export that comes late, at 09:30: the run lands in hour 07, not 09.
    _record_run(admin_url, acme, "inline", "2020-03-04T07:45:00Z", [("gpt-x", 10, 5, "0.00001")])
    late = dict(event, time="2020-03-04T09:30:00Z", id=str(uuid.uuid4()))
    third = handler(late, FakeLambdaContext(function_name="pa-acme-prod-MeteringFunction"))
    assert third["exported"] == ["hour:2020-03-04T07", "hour:2020-03-04T08"]
    later = _usage_lines(operator.objects(), [acme])
    assert [(k, _figures(line)) for k, line in later if k.endswith("T07.jsonl")] == [
        (
            "metering/acme/prod/hour/2020-03-04T07.jsonl",
            {"requests": 1, "input_tokens": 10, "output_tokens": 5, "cost_usd": 1e-05},
        )
    ]
    assert not [k for k, _ in later if k.endswith("T08.jsonl")]
    assert operator.objects()[hour_key] == objects[hour_key]
    assert len(operator.drain_events()) == 2

    # `pa tenants usage` sums the month so far from its hours.
    march = _ledger(admin_url, [acme, globex], "2020-03-01T00:00Z", "2020-04-01T00:00Z")
    so_far = _pa_usage(operator, "2020-03")
    assert so_far["from"] == "hours" and so_far["requests"] == sum(f["requests"] for f in march.values()) == 4
    assert so_far["cost_usd"] == round(sum(f["cost_usd"] for f in march.values()), 8)
    assert (so_far["runs"], so_far["durable_runs"]) == (3, 1)

    # The month is exported once it closes, with both hours' usage in it.
    month = period_of("month", datetime(2020, 3, 9, tzinfo=UTC))
    config = MeteringConfig.from_environment()
    result = run_sync(export_period(month, config, OperatorPublisher(config), rates))
    month_lines = _usage_lines(operator.objects(), [acme, globex])
    month_expected = _ledger(admin_url, [acme, globex], "2020-03-01T00:00Z", "2020-04-01T00:00Z")
    got = {(line["org"], line["model"]): _figures(line) for k, line in month_lines if k == result.key}
    assert got == month_expected and got[(acme.slug, "gpt-x")]["requests"] == 2
    assert run_sync(export_period(month, config, OperatorPublisher(config), rates)).outcome == "already_exported"
    closed = _pa_usage(operator, "2020-03")
    assert closed["from"] == "month" and closed["objects"] == 1
    assert {k: closed[k] for k in ("requests", "cost_usd", "runs")} == {
        k: so_far[k] for k in ("requests", "cost_usd", "runs")
    }


def _pa_usage(operator: Operator, month: str) -> dict[str, Any]:
    """`pa tenants usage --month` as the operator runs it; acme's row."""
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "pa"),
            "tenants",
            "usage",
            "--month",
            month,
            "--bucket",
            operator.bucket,
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [(r["tenant"], r["stage"]) for r in rows] == [("acme", "prod")]
    return dict(rows[0])
