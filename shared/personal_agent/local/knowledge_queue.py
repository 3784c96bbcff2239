"""The knowledge pipeline on moto, as the template wires it on AWS: the documents bucket (versioned, CORS for the
browser's POST) notifies the ingest queue (with a DLQ) of `documents/` uploads, and a poller plays Lambda's SQS
event source mapping: batches of up to ten messages to the `pa-ingest` handler in-process (through the same
dispatcher as every local Lambda), deleting only what the handler did not report in `batchItemFailures`."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

from personal_agent.local.aws import ACCOUNT_ID, LambdaDispatcher

log = logging.getLogger("personal_agent.local.knowledge")
BUCKET = "pa-documents"
QUEUE = "pa-ingest"
DLQ = "pa-ingest-dlq"
FUNCTION = "pa-ingest"
LOCAL_VISIBILITY_SECONDS = 10  # a failed message is retried this much later (on AWS: the function timeout x 6)
MAX_RECEIVES = 3


def provision_knowledge(endpoint: str, region: str, web_origins: list[str]) -> dict[str, str]:
    """Create (or keep) the bucket, the queues and the notification; return the env vars that name them."""
    import boto3

    s3 = boto3.client("s3", endpoint_url=endpoint, region_name=region)
    sqs = boto3.client("sqs", endpoint_url=endpoint, region_name=region)
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
            "CORSRules": [{"AllowedMethods": ["POST"], "AllowedOrigins": web_origins, "AllowedHeaders": ["*"]}]
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


def sqs_event(messages: list[dict[str, Any]], queue_arn: str, region: str) -> dict[str, Any]:
    """The event Lambda's SQS event source mapping sends (what Powertools' batch utility reads)."""
    return {
        "Records": [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": m.get("Attributes", {}),
                "messageAttributes": {},
                "md5OfBody": m.get("MD5OfBody", ""),
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": region,
            }
            for m in messages
        ]
    }


class IngestPoller:
    """Lambda's SQS event source mapping for the local ingest queue, on a daemon thread."""

    def __init__(self, dispatcher: LambdaDispatcher, endpoint: str, region: str, queue_url: str) -> None:
        import boto3

        self.dispatcher = dispatcher
        self.region = region
        self.queue_url = queue_url
        self.queue_arn = f"arn:aws:sqs:{region}:{ACCOUNT_ID}:{queue_url.rsplit('/', 1)[-1]}"
        self.sqs = boto3.client("sqs", endpoint_url=endpoint, region_name=region)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="pa-ingest-poller", daemon=True)

    def start(self) -> IngestPoller:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=5)

    def _run(self) -> None:
        while not self.stopping.is_set():
            try:
                self.poll_once(wait_seconds=1)
            except Exception as exc:  # noqa: BLE001 - moto stopping, a handler bug: logged, the loop goes on
                if not self.stopping.is_set():
                    log.warning("ingest poller: %s: %s", type(exc).__name__, exc)
                    self.stopping.wait(1)

    def poll_once(self, wait_seconds: int = 0) -> int:
        """Receive one batch, hand it to the function, delete what succeeded; returns the batch's size."""
        messages: list[Any] = self.sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=10,
            WaitTimeSeconds=wait_seconds,
            AttributeNames=["All"],
        ).get("Messages", [])
        if not messages:
            return 0
        payload, errored = self.dispatcher.call(FUNCTION, sqs_event(messages, self.queue_arn, self.region))
        failed: set[str] = set()
        if errored:
            failed = {m["MessageId"] for m in messages}  # the whole batch returns to the queue, as on AWS
        else:
            response = json.loads(payload or b"{}") or {}
            failed = {f["itemIdentifier"] for f in response.get("batchItemFailures", [])}
        done = [m for m in messages if m["MessageId"] not in failed]
        if done:
            entries: Any = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)]
            self.sqs.delete_message_batch(QueueUrl=self.queue_url, Entries=entries)
        return len(messages)
