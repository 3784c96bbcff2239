"""Workflow outputs on moto, as the template wires them on AWS: the outputs queue (with a DLQ), a verified SES
sender, and a poller that plays Lambda's SQS event source mapping for `pa-deliver` (batches of up to ten, to the
handler in-process through the dispatcher every local Lambda uses; what it reports failed stays queued)."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

from personal_agent.local.aws import ACCOUNT_ID, LambdaDispatcher

log = logging.getLogger("personal_agent.local.outputs")
QUEUE = "pa-outputs"
DLQ = "pa-outputs-dlq"
FUNCTION = "pa-deliver"
LOCAL_VISIBILITY_SECONDS = 30
MAX_RECEIVES = 5


def provision_outputs(endpoint: str, region: str, email_from: str) -> dict[str, str]:
    """Create (or keep) the queues and verify the sender address; return the env var naming the queue."""
    import boto3

    sqs = boto3.client("sqs", endpoint_url=endpoint, region_name=region)
    sqs.create_queue(QueueName=DLQ, Attributes={"MessageRetentionPeriod": "1209600"})
    redrive = json.dumps(
        {"deadLetterTargetArn": f"arn:aws:sqs:{region}:{ACCOUNT_ID}:{DLQ}", "maxReceiveCount": MAX_RECEIVES}
    )
    attributes: Any = {"VisibilityTimeout": str(LOCAL_VISIBILITY_SECONDS), "RedrivePolicy": redrive}
    queue_url = sqs.create_queue(QueueName=QUEUE, Attributes=attributes)["QueueUrl"]
    boto3.client("ses", endpoint_url=endpoint, region_name=region).verify_email_identity(EmailAddress=email_from)
    return {"PA_OUTPUT_QUEUE_URL": queue_url}


class OutputPoller:
    """The outputs queue's event source mapping, on a daemon thread."""

    def __init__(self, dispatcher: LambdaDispatcher, endpoint: str, region: str, queue_url: str) -> None:
        import boto3

        self.dispatcher = dispatcher
        self.region = region
        self.queue_url = queue_url
        self.queue_arn = f"arn:aws:sqs:{region}:{ACCOUNT_ID}:{queue_url.rsplit('/', 1)[-1]}"
        self.sqs = boto3.client("sqs", endpoint_url=endpoint, region_name=region)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="pa-outputs-poller", daemon=True)

    def start(self) -> OutputPoller:
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
                    log.warning("outputs poller: %s: %s", type(exc).__name__, exc)
                    self.stopping.wait(1)

    def poll_once(self, wait_seconds: int = 0) -> int:
        """Receive one batch, hand it to the function, delete what succeeded; returns the batch's size."""
        messages: list[Any] = self.sqs.receive_message(
            QueueUrl=self.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=wait_seconds, AttributeNames=["All"]
        ).get("Messages", [])
        if not messages:
            return 0
        records = [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": m.get("Attributes", {}),
                "messageAttributes": {},
                "md5OfBody": m.get("MD5OfBody", ""),
                "eventSource": "aws:sqs",
                "eventSourceARN": self.queue_arn,
                "awsRegion": self.region,
            }
            for m in messages
        ]
        payload, errored = self.dispatcher.call(FUNCTION, {"Records": records})
        if errored:
            failed = {m["MessageId"] for m in messages}  # the whole batch returns to the queue, as on AWS
        else:
            failed = {f["itemIdentifier"] for f in (json.loads(payload or b"{}") or {}).get("batchItemFailures", [])}
        done: Any = [
            {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]}
            for i, m in enumerate(messages)
            if m["MessageId"] not in failed
        ]
        if done:
            self.sqs.delete_message_batch(QueueUrl=self.queue_url, Entries=done)
        return len(messages)
