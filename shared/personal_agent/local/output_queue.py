"""Workflow outputs on moto, as the template wires them on AWS: the outputs queue (with a DLQ), a verified SES
sender; `local/sqs_event_source.py` feeds the queue to `pa-deliver` as Lambda's event source mapping would."""

from __future__ import annotations

import json
from typing import Any

from personal_agent.aws_clients import aws_client_at
from personal_agent.local.aws import ACCOUNT_ID

QUEUE = "pa-outputs"
DLQ = "pa-outputs-dlq"
FUNCTION = "pa-deliver"
LOCAL_VISIBILITY_SECONDS = 30
MAX_RECEIVES = 5


def provision_outputs(endpoint: str, region: str, email_from: str) -> dict[str, str]:
    """Create (or keep) the queues and verify the sender address; return the env var naming the queue."""
    sqs = aws_client_at("sqs", endpoint, region)
    sqs.create_queue(QueueName=DLQ, Attributes={"MessageRetentionPeriod": "1209600"})
    redrive = json.dumps(
        {"deadLetterTargetArn": f"arn:aws:sqs:{region}:{ACCOUNT_ID}:{DLQ}", "maxReceiveCount": MAX_RECEIVES}
    )
    attributes: Any = {"VisibilityTimeout": str(LOCAL_VISIBILITY_SECONDS), "RedrivePolicy": redrive}
    queue_url = sqs.create_queue(QueueName=QUEUE, Attributes=attributes)["QueueUrl"]
    aws_client_at("ses", endpoint, region).verify_email_identity(EmailAddress=email_from)
    return {"PA_OUTPUT_QUEUE_URL": queue_url}
