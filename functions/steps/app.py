"""Steps function: the Task states of the durable run state machine, one thin call into the engine."""

from __future__ import annotations

from typing import Any

from personal_agent.lifecycle.durable_steps import handle_step
from personal_agent.observability import instrument


@instrument(correlation_id_path="run_id", trace=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Advance a durable run (or answer a ping) and return a small pointer for the next state."""
    return handle_step(event)
