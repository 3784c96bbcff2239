"""Deliver an export to the operator: the JSON Lines object in their bucket, the event on their bus."""

from __future__ import annotations

import json
from typing import Any

from personal_agent.aws_clients import aws_client_at
from personal_agent.metering.config import MeteringConfig
from personal_agent.metering.document import ExportDocument, event_detail

EVENT_SOURCE = "personal-agent.metering"
EVENT_DETAIL_TYPE = "Tenant usage exported"


class OperatorPublisher:
    """S3 and EventBridge clients for one stack's metering (the bus may be another account's, by ARN)."""

    def __init__(self, config: MeteringConfig) -> None:
        self.config = config
        self._s3: Any = aws_client_at("s3", config.endpoint_url, config.region)
        self._events: Any = aws_client_at("events", config.endpoint_url, config.region)

    def publish(self, key: str, document: ExportDocument) -> None:
        """Write the object (same key and bytes on a repeat), then announce it; raise if the bus refused it."""
        self._s3.put_object(
            Bucket=self.config.bucket, Key=key, Body=document.jsonl(), ContentType="application/x-ndjson"
        )
        if not self.config.bus_arn:
            return
        detail = event_detail(document, self.config.bucket, key)
        answer = self._events.put_events(
            Entries=[
                {
                    "Source": EVENT_SOURCE,
                    "DetailType": EVENT_DETAIL_TYPE,
                    "Detail": json.dumps(detail, sort_keys=True),
                    "EventBusName": self.config.bus_arn,
                    "Resources": [f"arn:aws:s3:::{self.config.bucket}/{key}"],
                }
            ]
        )
        if answer.get("FailedEntryCount"):
            failure = answer["Entries"][0]
            raise RuntimeError(f"the operator bus refused the event: {failure.get('ErrorCode')}")
