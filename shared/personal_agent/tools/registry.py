"""First-party tools by name. A run's toolset is the snapshot of names in its RunSpec."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from personal_agent.tools.arithmetic import calculate


@dataclass(frozen=True)
class ToolDef:
    name: str
    function: Callable[..., Any]
    description: str
    acts: bool = False
    requires_approval: bool = False
    required_tier: int = 0


def current_time() -> str:
    """The current date and time in UTC (ISO 8601)."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


_TOOLS: dict[str, ToolDef] = {}


def register_tool(tool: ToolDef) -> None:
    """Add a tool to the registry (first-party tools at import; tests add scripted ones)."""
    _TOOLS[tool.name] = tool


def unregister_tool(name: str) -> None:
    _TOOLS.pop(name, None)


def get_tool(name: str) -> ToolDef | None:
    return _TOOLS.get(name)


def send_demo_message(to: str, text: str) -> str:
    """Pretend to send a message (local mode's stand-in for a tool that acts on the world)."""
    return f"(demo) message to {to} queued: {text[:200]}"


def default_tool_names() -> list[str]:
    """The tools a chat run gets unless it asks otherwise (locally also a demo tool that acts)."""
    from personal_agent.settings import get_settings

    names = ["current_time", "calculate"]
    if get_settings().is_local:
        names.append("send_demo_message")
    return names


register_tool(ToolDef("current_time", current_time, "The current date and time in UTC."))
register_tool(ToolDef("calculate", calculate, "Evaluate an arithmetic expression."))
register_tool(
    ToolDef(
        "send_demo_message",
        send_demo_message,
        "Send a message to a person or team (demo: nothing leaves the machine).",
        acts=True,
    )
)
