"""The caller's `tool_choice` (`/v1`: `required`, or one of its own function tools by name) as pydantic-ai's
per-step `tool_choice`: it binds the model request that answers the caller's input — the run's first, or the one
after a retried call — and not the requests after the agent's own tools ran, so the run can still answer.

A static `tool_choice` would bind every request (pydantic-ai refuses `required` there for that reason); a
capability's settings callable is evaluated per step, and the step's last message says what it answers: the
caller's turn (its user prompt, or results of the caller's own tools) or the agent's own tools' results."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage, ModelRequest, RetryPromptPart, ToolReturnPart
from pydantic_ai.settings import ModelSettings

from personal_agent.spec.run_deps import RunDeps
from personal_agent.spec.run_spec import RunSpec

REQUIRED: Literal["required"] = "required"


def forced(spec: RunSpec) -> Literal["required"] | list[str] | None:
    """pydantic-ai's `tool_choice` for a step the caller's choice binds: `required`, or the named tool."""
    choice = spec.model_settings.tool_choice
    if choice is None:
        return None
    return REQUIRED if choice == REQUIRED else [choice]


def answers_the_caller(messages: Sequence[ModelMessage], client_tools: frozenset[str]) -> bool:
    """The step answers the caller's own turn: the last request holds no result of the agent's own tools."""
    last = messages[-1] if messages else None
    if not isinstance(last, ModelRequest):
        return False
    return not any(
        isinstance(part, ToolReturnPart | RetryPromptPart) and part.tool_name not in client_tools for part in last.parts
    )


@dataclass
class CallerToolChoice(AbstractCapability[RunDeps]):
    """Force a tool call on the steps that answer the caller (`forced`); the model decides on the others."""

    spec: RunSpec

    def get_model_settings(self) -> Any:
        choice = forced(self.spec)
        if choice is None:
            return None
        client_tools = frozenset(t.name for t in self.spec.client_tools)

        def per_step(ctx: RunContext[RunDeps]) -> ModelSettings:
            if answers_the_caller(ctx.messages, client_tools):
                return ModelSettings(tool_choice=choice)
            return ModelSettings()

        return per_step
