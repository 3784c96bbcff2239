"""The knowledge pipeline on moto, as the template wires it on AWS: the documents bucket (versioned, CORS for the
browser's POST) notifies the ingest queue (with a DLQ) of `documents/` uploads; `local/sqs_event_source.py`
feeds the queue to `pa-ingest` as Lambda's event source mapping would."""

from __future__ import annotations

import json
from typing import Any

from personal_agent.aws_clients import aws_client_at
from personal_agent.local.aws import ACCOUNT_ID

BUCKET = "pa-documents"
QUEUE = "pa-ingest"
DLQ = "pa-ingest-dlq"
FUNCTION = "pa-ingest"
LOCAL_VISIBILITY_SECONDS = 10  # a failed message is retried this much later (on AWS: the function timeout x 6)
MAX_RECEIVES = 3


def provision_knowledge(endpoint: str, region: str, web_origins: list[str]) -> dict[str, str]:
    """Create (or keep) the bucket, the queues and the notification; return the env vars that name them."""
    s3 = aws_client_at("s3", endpoint, region)
    sqs = aws_client_at("sqs", endpoint, region)
    dlq_url = sqs.create_queue(QueueName=DLQ, Attributes={"MessageRetentionPeriod": "1209600"})["QueueUrl"]
    dlq_arn = f"arn:aws:sqs:{region}:{ACCOUNT_ID}:{DLQ}"
    redrive = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": MAX_RECEIVES})
    attributes: Any = {"VisibilityTimeout": str(LOCAL_VISIBILITY_SECONDS), "RedrivePolicy": redrive}
    queue_url = sqs.create_queue(QueueName=QUEUE, Attributes=attributes)["QueueUrl"]
    if BUCKET not in {b["Name"] for b in s3.list_buckets().get("Buckets", [])}:
        s3.create_bucket(Bucket=BUCKET)
    s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    s3.put_bucket_cors(
        Bucket=BUCKET,
        CORSConfiguration={
            # POST: presigned uploads; GET: an attachment's presigned download, read by the web chat's fetch.
            "CORSRules": [{"AllowedMethods": ["GET", "POST"], "AllowedOrigins": web_origins, "AllowedHeaders": ["*"]}]
        },
    )
    s3.put_bucket_notification_configuration(
        Bucket=BUCKET,
        NotificationConfiguration={
            "QueueConfigurations": [
                {
                    "QueueArn": f"arn:aws:sqs:{region}:{ACCOUNT_ID}:{QUEUE}",
                    "Events": ["s3:ObjectCreated:*"],
                    "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": "documents/"}]}},
                }
            ]
        },
    )
    return {"PA_DOCUMENTS_BUCKET": BUCKET, "PA_INGEST_QUEUE_URL": queue_url, "PA_INGEST_DLQ_URL": dlq_url}
