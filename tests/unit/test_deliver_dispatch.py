"""The deliver function dispatches the outputs queue's messages by type: every kind the outbox queues
(`outbox/queue.py`) has its handler there, and nothing else does (the features only do the work of their kind)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from functions.deliver import app
from personal_agent.outbox import queue

KINDS = {
    queue.RUN_FINISHED,
    queue.APPROVAL_REQUESTED,
    queue.PUSH_APPROVALS,
    queue.PUSH_ESCALATION,
    queue.DELIVER,
    queue.START_FOLLOWUPS,
    queue.EVAL_RUN_ENDED,
    queue.SAMPLE_RUN,
}


def test_every_kind_the_outbox_queues_has_a_handler_in_the_deliver_function() -> None:
    assert set(app.HANDLERS) == KINDS


def test_a_message_of_an_unknown_type_is_dropped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    record: dict[str, Any] = {"messageId": "m1", "body": '{"type": "teleport", "org_id": "x"}', "attributes": {}}
    with caplog.at_level(logging.WARNING, logger="personal_agent.deliver"):
        app.record_handler(SQSRecord(record))
    assert "unknown type was dropped: 'teleport'" in caplog.text
