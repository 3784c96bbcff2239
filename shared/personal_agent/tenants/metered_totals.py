"""`pa tenants usage --month 2026-11`: every tenant's metered usage for a month, from the operator's bucket.

A tenant's closed month has one monthly object; a month still running (or a monthly export not yet made) is
the sum of its hourly objects. Each object's `total` line is what is summed.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from personal_agent.metering.periods import month_period
from personal_agent.tenants.stacks import s3_client

SUMMED = ("runs", "durable_runs", "requests", "input_tokens", "output_tokens", "cost_usd", "platform_cost_usd")


@dataclass
class TenantUsage:
    tenant: str
    stage: str
    source: str  # month | hours
    objects: int = 0
    totals: dict[str, float] = field(default_factory=lambda: dict.fromkeys(SUMMED, 0))


def _total_line(client: Any, bucket: str, key: str) -> dict[str, Any]:
    body = client.get_object(Bucket=bucket, Key=key)["Body"].read().decode()
    for line in reversed(body.splitlines()):
        record: dict[str, Any] = json.loads(line)
        if record.get("type") == "total":
            return record
    raise ValueError(f"s3://{bucket}/{key} has no total line")


def month_usage(bucket: str, month: str, prefix: str = "metering/", region: str | None = None) -> list[TenantUsage]:
    """Per tenant and stage: the month's totals (the monthly object, else the sum of its hours)."""
    label = month_period(month).label
    client = s3_client(region)
    keys: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(lambda: {"month": [], "hour": []})
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            parts = item["Key"][len(prefix) :].split("/")
            if len(parts) != 4 or not parts[3].endswith(".jsonl"):
                continue
            tenant, stage, kind, name = parts
            if kind == "month" and name == f"{label}.jsonl" or kind == "hour" and name.startswith(f"{label}-"):
                keys[(tenant, stage)][kind].append(item["Key"])
    found: list[TenantUsage] = []
    for (tenant, stage), by_kind in sorted(keys.items()):
        source = "month" if by_kind["month"] else "hour"
        usage = TenantUsage(tenant, stage, "month" if source == "month" else "hours")
        for key in by_kind[source]:
            total = _total_line(client, bucket, key)
            usage.objects += 1
            for name in SUMMED:
                usage.totals[name] += total.get(name, 0)
        usage.totals["cost_usd"] = round(usage.totals["cost_usd"], 8)
        usage.totals["platform_cost_usd"] = round(usage.totals["platform_cost_usd"], 8)
        found.append(usage)
    return found
