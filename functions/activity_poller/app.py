"""Activity poller function (StepsTaskMode=activity): started every minute, it long-polls the steps activity and
runs each task with the steps handler, then returns once what it took is done."""

from __future__ import annotations

from typing import Any

from personal_agent.lifecycle.activity_worker import poll_scheduled
from personal_agent.lifecycle.durable_steps import handle_step
from personal_agent.observability import instrument


@instrument(trace=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Poll for about a minute, leaving every task taken the step timeout to finish; report how many ran."""
    return {"tasks": poll_scheduled(context.get_remaining_time_in_millis, lambda step, _function: handle_step(step))}
