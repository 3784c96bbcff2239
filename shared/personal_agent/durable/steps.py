"""Dispatch of the state machine's Task inputs to step kinds. Inputs and outputs are small pointers."""

from __future__ import annotations

import os
from typing import Any

from personal_agent.errors import InvalidInput


def handle_step(event: dict[str, Any]) -> dict[str, Any]:
    """Run one step kind named by `action`."""
    action = event.get("action")
    if action == "ping":
        return {"ok": True, "action": "ping", "execution": event.get("execution"), "pid": os.getpid()}
    raise InvalidInput(f"unknown step action {action!r}", code="unknown_step")
