"""Build the pydantic-ai agent for a RunSpec: its model and its snapshotted toolset."""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent, Tool
from pydantic_ai.toolsets import FunctionToolset

from personal_agent.models.catalog import build_model
from personal_agent.runs.spec import RunSpec
from personal_agent.tools.registry import get_tool


def build_toolset(spec: RunSpec) -> FunctionToolset[None]:
    """The tools the spec snapshotted; a tool no longer registered is left out, never replaced."""
    tools: list[Tool[None]] = []
    for ref in spec.tools:
        tool = get_tool(ref.name)
        if tool is None:
            continue
        tools.append(
            Tool(
                tool.function,
                name=tool.name,
                description=tool.description,
                takes_ctx=False,
                requires_approval=ref.requires_approval or tool.requires_approval,
            )
        )
    return FunctionToolset(tools)


def build_agent(spec: RunSpec) -> Agent[None, Any]:
    """A fresh agent for one engine step (cheap: no I/O)."""
    from pydantic_ai import DeferredToolRequests

    return Agent(
        build_model(spec.model),
        instructions=spec.instructions or None,
        toolsets=[build_toolset(spec)],
        output_type=[str, DeferredToolRequests],
    )
