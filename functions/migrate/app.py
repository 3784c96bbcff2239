"""Migrations custom resource: applies infra/migrations (shipped beside this file) on every create and update of
the stack and answers CloudFormation; delete is a no-op."""

from __future__ import annotations

from typing import Any

from personal_agent.observability import instrument
from personal_agent.provisioning.migrations_resource import handle_migrations_event


@instrument(correlation_id_path="RequestId")
def handler(event: dict[str, Any], context: Any) -> dict[str, str]:
    """Apply the migrations and report SUCCESS or FAILED to CloudFormation."""
    response = handle_migrations_event(event)
    return {"Status": response.status, "Reason": response.reason}
