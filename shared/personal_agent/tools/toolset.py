"""A run's pydantic-ai toolset, from its RunSpec snapshot. Only the engine imports this module.

Each tool is built once per process (its schema does not change); what differs per run, whether a call needs a
person's approval, is decided by the tool's `prepare` from `ctx.deps` and `ctx.messages` at every step
(`governance/tool_gates.py`).
"""

from __future__ import annotations

import dataclasses
import functools

from pydantic_ai import RunContext, Tool
from pydantic_ai.tools import ToolDefinition, ToolPrepareFunc
from pydantic_ai.toolsets import FunctionToolset

from personal_agent.governance.tool_gates import needs_approval
from personal_agent.spec.run_deps import RunDeps
from personal_agent.spec.run_spec import RunSpec
from personal_agent.tools.registry import ToolDef, get_tool

TOOL_RETRIES = 2
"""How many times the model may correct a tool call's arguments (`ModelRetry`) before the run fails."""


def _approval_gate(tool: ToolDef) -> ToolPrepareFunc[RunDeps]:
    """The tool's definition for this step: `unapproved` (a deferred call) when the run needs a person to
    approve it, from the snapshot in the spec, the tool's own flags, what is in the run's context (untrusted
    content) and the run's routing confidence (`governance/tool_gates.py`)."""

    async def prepare(ctx: RunContext[RunDeps], definition: ToolDefinition) -> ToolDefinition:
        ref = ctx.deps.tool_ref(tool.name)
        acts = tool.acts or (ref is not None and ref.acts)
        declared = tool.requires_approval or (ref is not None and ref.requires_approval)
        if needs_approval(ctx.deps.spec, ctx.messages, acts=acts, declared=declared, routing=ctx.deps.routing):
            return dataclasses.replace(definition, kind="unapproved")
        return definition

    return prepare


@functools.cache
def pydantic_tool(tool: ToolDef) -> Tool[RunDeps]:
    """The pydantic-ai tool of a registered tool, built on first use and kept for the process."""
    return Tool(
        tool.implementation(),
        name=tool.name,
        description=tool.description,
        prepare=_approval_gate(tool),
        max_retries=TOOL_RETRIES,
    )


def run_toolset(spec: RunSpec) -> FunctionToolset[RunDeps]:
    """The tools the spec snapshotted, in its order; a tool no longer registered is left out, never replaced."""
    tools = [pydantic_tool(tool) for ref in spec.tools if (tool := get_tool(ref.name)) is not None]
    return FunctionToolset(tools)
