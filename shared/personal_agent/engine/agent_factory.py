"""Build the pydantic-ai agent for one engine step of a RunSpec: its model chain (through the classification
gate) and its snapshotted toolset, with `RunDeps` as the agent's deps type. An agent with an `output_schema`
answers with validated structured output (a `final_result` call whose arguments match the schema), as does a run
whose caller asked for a schema (`/v1` `response_format`)."""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent, DeferredToolRequests, ModelRetry, StructuredDict, ToolOutput
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ExternalToolset

from personal_agent import otel_export
from personal_agent.agents.structured import output_problem
from personal_agent.engine.context_fit import ContextFit
from personal_agent.engine.emitter import RunEmitter
from personal_agent.engine.search_rewrite import QueryRewrite
from personal_agent.engine.tool_choice import CallerToolChoice
from personal_agent.engine.tool_review import ToolReview
from personal_agent.engine.user_context import run_capabilities, run_instructions
from personal_agent.governance.model_build import build_run_model
from personal_agent.mcp_servers.toolsets import mcp_toolsets
from personal_agent.spec.run_deps import RunDeps
from personal_agent.spec.run_spec import OUTPUT_TOOL, RunSpec
from personal_agent.tools.toolset import run_toolset


async def build_agent(spec: RunSpec, emitter: RunEmitter | None = None) -> Agent[RunDeps, Any]:
    """A fresh agent for one engine step (the model is resolved, and the classification gate runs, every step);
    its MCP toolsets connect when the step's agent run starts and close when it ends."""
    schema = spec.answer_schema
    output: list[Any] = [str, DeferredToolRequests]
    if schema is not None:
        structured = StructuredDict(schema, name="output", description="the answer as the agent's output schema")
        output = [ToolOutput(structured, name=OUTPUT_TOOL, max_retries=2), DeferredToolRequests]
    agent: Agent[RunDeps, Any] = Agent(
        await build_run_model(spec),
        deps_type=RunDeps,
        instructions=run_instructions(spec),
        # the history is cut to the window first; every call is reviewed once its arguments are validated; a search's
        # follow-up query is rewritten (metered) just before it runs
        capabilities=[
            ContextFit(spec, emitter),
            *run_capabilities(),
            ToolReview(),
            QueryRewrite(),
            CallerToolChoice(spec),  # the caller's `tool_choice` (`/v1`) on the requests that answer it
            *otel_export.capabilities(spec),  # GenAI spans over OTLP when PA_OTEL_ENDPOINT is set
        ],
        toolsets=[run_toolset(spec), *mcp_toolsets(spec), *client_toolsets(spec)],
        output_type=output,
        name=spec.agent.slug if spec.agent else "assistant",
    )
    if schema is not None:

        @agent.output_validator
        def _matches(value: Any) -> Any:
            if isinstance(value, dict) and (problem := output_problem(schema, value)) is not None:
                raise ModelRetry(f"the answer does not match the output schema: {problem}")
            return value

    return agent


def client_toolsets(spec: RunSpec) -> list[AbstractToolset[RunDeps]]:
    """The caller's own tools (`/v1` `tools`): the model may call them; such a call ends the run (a deferred
    `external` call the caller answers in its next request), and nothing of it runs here."""
    if not spec.client_tools:
        return []
    definitions = [
        ToolDefinition(name=t.name, description=t.description, parameters_json_schema=t.parameters, kind="external")
        for t in spec.client_tools
    ]
    return [ExternalToolset(definitions, id="client")]
