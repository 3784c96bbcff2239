"""The ingest function's partial batch failures, through the local event source mapping: a batch with a message
the function cannot read (reported in `batchItemFailures`) and one it handles (S3's test event: nothing to do);
only the handled one is deleted, the other returns to the queue (and, after its receives, to the DLQ)."""

from __future__ import annotations

import json
import os
from typing import Any

import boto3

from functions.ingest.app import handler
from personal_agent.local.aws import LocalLambdaContext
from personal_agent.local.knowledge_queue import FUNCTION
from personal_agent.local.sqs_event_source import SqsEventSource, sqs_event

TEST_EVENT = json.dumps({"Service": "Amazon S3", "Event": "s3:TestEvent", "Bucket": "pa-documents"})


def test_the_handler_reports_only_the_message_it_could_not_process(stack: Any) -> None:
    messages = [
        {"MessageId": "good", "ReceiptHandle": "r1", "Body": TEST_EVENT},
        {"MessageId": "bad", "ReceiptHandle": "r2", "Body": "{not json"},
    ]
    event = sqs_event(messages, "arn:aws:sqs:us-east-1:123456789012:pa-ingest", "us-east-1")
    response = handler(event, LocalLambdaContext("pa-ingest"))
    assert response == {"batchItemFailures": [{"itemIdentifier": "bad"}]}


def test_the_local_event_source_mapping_deletes_only_what_succeeded(stack: Any) -> None:
    endpoint = os.environ["AWS_ENDPOINT_URL"]
    sqs = boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1")
    url = sqs.create_queue(QueueName="pa-ingest-batch-test", Attributes={"VisibilityTimeout": "300"})["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody=TEST_EVENT)
    sqs.send_message(QueueUrl=url, MessageBody="{not json")
    poller = SqsEventSource(
        stack.aws.dispatcher, endpoint, "us-east-1", url, FUNCTION
    )  # not started: one batch by hand
    received = 0
    while received < 2:
        got = poller.poll_once(wait_seconds=1)
        assert got, "the queue ran dry before both messages came"
        received += got
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert (attributes["ApproximateNumberOfMessages"], attributes["ApproximateNumberOfMessagesNotVisible"]) == (
        "0",
        "1",
    )
    sqs.delete_queue(QueueUrl=url)
