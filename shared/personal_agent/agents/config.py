"""What one version of an agent is: its configuration, checked for shape here (names the org must know, such as
tools and delegates, are checked by `agents.service` against what the caller passes in)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from personal_agent.errors import InvalidInput
from personal_agent.spec.tool_policy import ReviewMode

SLUG_PATTERN = r"^[a-z0-9-]{2,64}$"
BUILTIN_SLUG = "assistant"
MAX_STARTERS = 6

ASSISTANT_INSTRUCTIONS = "You are Personal Agent, a helpful assistant. Answer clearly and concisely in Markdown. \
Use tools when they help; never invent tool results."
"""The built-in `assistant`'s first instructions (today's generic assistant, editable per org)."""

Classification = Literal["standard", "confidential", "restricted"]
KnowledgeScope = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]
"""`org`, `personal`, or a named collection (its id or its name; issue 36): searched only where the run's user
is one of its members."""
ApprovalOverride = Literal["gate", "always"]
"""Stricter than a tool's own policy only: `gate` (the confidence gate decides) or `always` (a person decides)."""

_JSON_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}
_MAX_SCHEMA_CHARS = 20_000


class AgentConfig(BaseModel):
    """One immutable version's configuration (stored as JSON in `agent_versions.config`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=100)
    description: str = Field("", max_length=2000)
    instructions: str = Field(ASSISTANT_INSTRUCTIONS, min_length=1, max_length=32_000)
    model: str | None = Field(
        None, max_length=200, description="`auto`, an explicit `provider:model`, or null for the org's default"
    )
    tools: list[str] | None = Field(
        None, max_length=100, description="first-party and MCP tool names; null: the run's defaults (or its caller's)"
    )
    knowledge: list[KnowledgeScope] = Field(
        default_factory=list,
        max_length=20,
        description="collections it searches (`org`, `personal`, a collection's id or name); none: every one",
    )
    memory: bool = Field(True, description="recall the user's memories and offer `remember`")
    delegates: list[str] = Field(default_factory=list, max_length=20, description="slugs of agents it may hand work to")
    starter_prompts: list[str] = Field(default_factory=list, max_length=MAX_STARTERS)
    approval: dict[str, ApprovalOverride] = Field(
        default_factory=dict, max_length=100, description="per tool: a policy stricter than the tool's own"
    )
    classification: Classification = Field("standard", description="the floor of its chats' classification")
    review_mode: ReviewMode = Field(
        "autonomous",
        description="who reviews its acting calls: `autonomous` (the gates), `approve_each` (a person, each call) or"
        " `judge` (a cheap model: approve, ask a person, or deny); a chat may make it stricter",
    )
    output_schema: dict[str, Any] | None = Field(
        None, description="a JSON Schema (an object): the run's final answer is validated structured output"
    )

    @field_validator("starter_prompts")
    @classmethod
    def _starters(cls, prompts: list[str]) -> list[str]:
        if any(not p.strip() or len(p) > 500 for p in prompts):
            raise ValueError("a starter prompt has 1 to 500 characters")
        return prompts

    @field_validator("tools", "delegates")
    @classmethod
    def _unique(cls, names: list[str] | None) -> list[str] | None:
        if names is not None and len(set(names)) != len(names):
            raise ValueError("a name is listed twice")
        return names


def check_output_schema(schema: dict[str, Any] | None) -> None:
    """A JSON Schema for structured output: an object schema whose properties are schemas with known types
    (422 `invalid_output_schema` otherwise)."""
    if schema is None:
        return
    import json

    if len(json.dumps(schema)) > _MAX_SCHEMA_CHARS:
        raise InvalidInput("the output schema is too large", code="invalid_output_schema")
    problem = _schema_problem(schema, top=True)
    if problem:
        raise InvalidInput(f"output_schema is not a JSON Schema: {problem}", code="invalid_output_schema")


def _schema_problem(schema: Any, *, top: bool = False) -> str | None:
    if not isinstance(schema, dict):
        return "a schema is an object"
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
    if any(not isinstance(k, str) or k not in _JSON_TYPES for k in kinds):
        return f"unknown type {kind!r}"
    if top and kinds != ["object"]:
        return "the output schema's type is `object`"
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        return "`properties` maps names to schemas"
    for sub in properties.values():
        if (problem := _schema_problem(sub)) is not None:
            return problem
    required = schema.get("required", [])
    if not isinstance(required, list) or any(not isinstance(r, str) for r in required):
        return "`required` is a list of property names"
    if "items" in schema and (problem := _schema_problem(schema["items"])) is not None:
        return problem
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            if not isinstance(schema[key], list):
                return f"`{key}` is a list of schemas"
            for sub in schema[key]:
                if (problem := _schema_problem(sub)) is not None:
                    return problem
    return None


def builtin_config() -> AgentConfig:
    """The built-in `assistant`: today's generic assistant (default tools, the org's default model)."""
    return AgentConfig(name="Assistant", description="The general assistant.")
