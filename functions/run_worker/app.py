"""Run worker function: invoked asynchronously with a run id, runs the engine to the end (inline mode)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from aws_lambda_powertools.logging import Logger

from personal_agent.runs.worker import run_to_end
from personal_agent.runtime import run_sync

logger = Logger()


@logger.inject_lambda_context(correlation_id_path="run_id")
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Run one inline run to its end."""
    return run_sync(run_to_end(UUID(event["run_id"]), UUID(event["org_id"])))
