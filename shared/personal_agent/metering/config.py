"""What the metering function is told by its environment (template.yaml sets these from the stack parameters)."""

from __future__ import annotations

import os
from datetime import timedelta

from pydantic import BaseModel, Field


class MeteringConfig(BaseModel):
    """Where a stack's usage goes and which periods it covers."""

    tenant: str = Field(min_length=1)
    stage: str = Field(min_length=1)
    bucket: str = Field(min_length=1)
    prefix: str = "metering/"
    bus_arn: str = ""
    grace: timedelta = timedelta(minutes=10)
    backfill_hours: int = Field(48, ge=1)
    backfill_months: int = Field(2, ge=1)
    endpoint_url: str | None = None
    region: str = "us-east-1"

    @classmethod
    def from_environment(cls) -> MeteringConfig:
        env = os.environ
        return cls(
            tenant=env.get("PA_TENANT_ID", ""),
            stage=env.get("PA_STAGE", ""),
            bucket=env.get("PA_METERING_BUCKET", ""),
            prefix=env.get("PA_METERING_PREFIX") or "metering/",
            bus_arn=env.get("PA_METERING_BUS_ARN", ""),
            grace=timedelta(seconds=int(env.get("PA_METERING_GRACE_SECONDS") or 600)),
            endpoint_url=env.get("AWS_ENDPOINT_URL") or None,
            region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
        )


def object_key(prefix: str, tenant: str, stage: str, kind: str, label: str) -> str:
    """`metering/acme/prod/hour/2026-11-30T21.jsonl`: one object per tenant, stage and period."""
    return f"{prefix}{tenant}/{stage}/{kind}/{label}.jsonl"
