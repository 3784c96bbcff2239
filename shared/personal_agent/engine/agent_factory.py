"""Build the pydantic-ai agent for a RunSpec: its model chain (through the classification gate) and its
snapshotted toolset, with the confidence gate deciding which acting tools need approval."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pydantic_ai import Agent, ModelRetry, Tool
from pydantic_ai.toolsets import FunctionToolset

from personal_agent.governance.routing import tool_needs_approval
from personal_agent.models.build import build_run_model
from personal_agent.runs.spec import RunSpec
from personal_agent.tools.arithmetic import ToolArgumentError
from personal_agent.tools.registry import get_tool

TOOL_RETRIES = 2
"""How many times the model may correct a tool call's arguments before the run fails."""


def _retrying(function: Callable[..., Any]) -> Callable[..., Any]:
    """The tool with argument problems turned into `ModelRetry`: the model sees what to fix and tries again."""

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except ToolArgumentError as exc:
            raise ModelRetry(str(exc)) from exc

    return call


def build_toolset(spec: RunSpec, routing: dict[str, Any] | None) -> FunctionToolset[None]:
    """The tools the spec snapshotted; a tool no longer registered is left out, never replaced."""
    tools: list[Tool[None]] = []
    for ref in spec.tools:
        tool = get_tool(ref.name)
        if tool is None:
            continue
        approval = tool_needs_approval(
            ref.acts or tool.acts, ref.requires_approval or tool.requires_approval, routing, spec.confidence_threshold
        )
        tools.append(
            Tool(
                _retrying(tool.function),
                name=tool.name,
                description=tool.description,
                takes_ctx=False,
                requires_approval=approval,
                max_retries=TOOL_RETRIES,
            )
        )
    return FunctionToolset(tools)


async def build_agent(spec: RunSpec, routing: dict[str, Any] | None) -> Agent[None, Any]:
    """A fresh agent for one engine step."""
    from pydantic_ai import DeferredToolRequests

    return Agent(
        await build_run_model(spec),
        instructions=spec.instructions or None,
        toolsets=[build_toolset(spec, routing)],
        output_type=[str, DeferredToolRequests],
    )
