"""Lambda's SQS event source mapping, played locally: a daemon thread receives batches of up to ten messages
from a queue on moto, hands them to a function in-process through the dispatcher every local Lambda uses, and
deletes only what the function did not report in `batchItemFailures` (a function error returns the whole batch
to the queue, as on AWS)."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

from personal_agent.aws_clients import aws_client_at
from personal_agent.local.aws import ACCOUNT_ID, LambdaDispatcher

log = logging.getLogger("personal_agent.local.sqs")


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


class SqsEventSource:
    """One queue → one function, on a daemon thread named after the function."""

    def __init__(self, dispatcher: LambdaDispatcher, endpoint: str, region: str, queue_url: str, function: str) -> None:
        self.dispatcher = dispatcher
        self.function = function
        self.region = region
        self.queue_url = queue_url
        self.queue_arn = f"arn:aws:sqs:{region}:{ACCOUNT_ID}:{queue_url.rsplit('/', 1)[-1]}"
        self.sqs = aws_client_at("sqs", endpoint, region)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"{function}-poller", daemon=True)

    def start(self) -> SqsEventSource:
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
                    log.warning("%s poller: %s: %s", self.function, type(exc).__name__, exc)
                    self.stopping.wait(1)

    def poll_once(self, wait_seconds: int = 0) -> int:
        """Receive one batch, hand it to the function, delete what succeeded; returns the batch's size."""
        messages: list[Any] = self.sqs.receive_message(
            QueueUrl=self.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=wait_seconds, AttributeNames=["All"]
        ).get("Messages", [])
        if not messages:
            return 0
        payload, errored = self.dispatcher.call(self.function, sqs_event(messages, self.queue_arn, self.region))
        if errored:
            failed = {m["MessageId"] for m in messages}
        else:
            failed = {f["itemIdentifier"] for f in (json.loads(payload or b"{}") or {}).get("batchItemFailures", [])}
        done = [m for m in messages if m["MessageId"] not in failed]
        if done:
            entries: Any = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)]
            self.sqs.delete_message_batch(QueueUrl=self.queue_url, Entries=entries)
        return len(messages)
