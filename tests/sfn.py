"""Waiting on Step Functions executions by polling their status (moto runs them in a thread)."""

from __future__ import annotations

import time
from typing import Any

TERMINAL = {"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"}


def wait_for_execution(sfn: Any, arn: str, timeout: float = 60.0, statuses: set[str] = TERMINAL) -> dict[str, Any]:
    """Poll until the execution reaches one of `statuses`; fail the test if it does not within `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        described: dict[str, Any] = sfn.describe_execution(executionArn=arn)
        if described["status"] in statuses:
            return described
        if time.monotonic() > deadline:
            raise AssertionError(f"execution {arn} still {described['status']} after {timeout}s")
        time.sleep(0.05)
