"""Test-firing a workflow from the admin console: a webhook delivery made by the API on the user's behalf (the
browser never holds the signing secret), started through the same claim and launch as a signed request. It
shows in the run history as a webhook delivery keyed `test-fire:…`. Only the owner may: the run acts as them."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.identity.principal import Principal
from personal_agent.workflows import delivery_store, ownership
from personal_agent.workflows.prompts import TriggerValues
from personal_agent.workflows.triggers import Accepted, start_delivery
from personal_agent.workflows.webhooks import check_depth, check_size


async def fire_now(principal: Principal, workflow_id: UUID, body: Any) -> tuple[Accepted, str]:
    """Start one run of the workflow with `body` as the webhook body; returns it and the delivery key."""
    text = json.dumps(body if body is not None else {"test": True})
    check_size(len(text.encode()))
    check_depth(text)
    async with org_transaction(principal.org_id) as conn:
        workflow = await ownership.owned_row(conn, principal, workflow_id)  # its run acts as the owner: nobody else's
    key = f"test-fire:{uuid.uuid4().hex}"
    delivery = await delivery_store.claim(workflow.org_id, workflow.id, "webhook", key)
    values = TriggerValues(
        trigger="webhook",
        time=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        workflow_name=workflow.name,
        body=text,
        webhook_id=key,
    )
    return await start_delivery(workflow, delivery, values, keep_failures=False), key
