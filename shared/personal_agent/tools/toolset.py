"""A run's pydantic-ai toolset, from its RunSpec snapshot. Only the engine imports this module.

Each tool is built once per process (its schema does not change). Whether a call needs a person's approval, is
denied by the org's rules or reviewed by the judge is decided per call, once its arguments are validated, by the
engine's review (`engine/tool_review.py`, which reads the gates of `governance/tool_gates.py`).
"""

from __future__ import annotations

import functools

from pydantic_ai import Tool
from pydantic_ai.toolsets import FunctionToolset

from personal_agent.spec.run_deps import RunDeps
from personal_agent.spec.run_spec import RunSpec
from personal_agent.tools.registry import ToolDef, get_tool

TOOL_RETRIES = 2
"""How many times the model may correct a tool call's arguments (`ModelRetry`) before the run fails."""


@functools.cache
def pydantic_tool(tool: ToolDef) -> Tool[RunDeps]:
    """The pydantic-ai tool of a registered tool, built on first use and kept for the process."""
    return Tool(tool.implementation(), name=tool.name, description=tool.description, max_retries=TOOL_RETRIES)


def run_toolset(spec: RunSpec) -> FunctionToolset[RunDeps]:
    """The tools the spec snapshotted, in its order; a tool no longer registered is left out, never replaced."""
    tools = [pydantic_tool(tool) for ref in spec.tools if (tool := get_tool(ref.name)) is not None]
    return FunctionToolset(tools)
