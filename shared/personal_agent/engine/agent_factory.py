"""Build the pydantic-ai agent for one engine step of a RunSpec: its model chain (through the classification
gate) and its snapshotted toolset, with `RunDeps` as the agent's deps type."""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent, DeferredToolRequests

from personal_agent.engine.context_fit import ContextFit
from personal_agent.engine.emitter import RunEmitter
from personal_agent.engine.user_context import run_capabilities, run_instructions
from personal_agent.governance.model_build import build_run_model
from personal_agent.mcp_servers.toolsets import mcp_toolsets
from personal_agent.spec.run_deps import RunDeps
from personal_agent.spec.run_spec import RunSpec
from personal_agent.tools.toolset import run_toolset


async def build_agent(spec: RunSpec, emitter: RunEmitter | None = None) -> Agent[RunDeps, Any]:
    """A fresh agent for one engine step (the model is resolved, and the classification gate runs, every step);
    its MCP toolsets connect when the step's agent run starts and close when it ends."""
    return Agent(
        await build_run_model(spec),
        deps_type=RunDeps,
        instructions=run_instructions(spec),
        capabilities=[ContextFit(spec, emitter), *run_capabilities()],  # the history is cut to the window first
        toolsets=[run_toolset(spec), *mcp_toolsets(spec)],
        output_type=[str, DeferredToolRequests],
    )
