"""Agents: create, list, read, change (a new version each time), delete; versions, publish, diff; export/import."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import APIRouter, Path, Query, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from personal_agent.agents import portable, service
from personal_agent.agents.config import (
    MAX_STARTERS,
    SLUG_PATTERN,
    AgentConfig,
    ApprovalOverride,
    Classification,
    KnowledgeScope,
)
from personal_agent.api.deps import CurrentPrincipal
from personal_agent.errors import InvalidInput
from personal_agent.identity.principal import Principal
from personal_agent.mcp_servers import service as mcp_service
from personal_agent.spec.tool_policy import ReviewMode
from personal_agent.tools.registry import first_party_names

router = APIRouter(prefix="/api/v1/agents", tags=["agents"])

Visibility = Literal["private", "org"]
VersionNumber = Annotated[int, Path(ge=1, le=1_000_000)]
StarterPrompt = Annotated[str, Field(min_length=1, max_length=500)]


class AgentFields(BaseModel):
    """The versioned fields of an agent (`AgentConfig`)."""

    name: str = Field(min_length=1, max_length=100)
    description: str = Field("", max_length=2000)
    instructions: str = Field(min_length=1, max_length=32_000)
    model: str | None = Field(
        None, max_length=200, description="`auto`, an explicit `provider:model`, or null for the org's default"
    )
    tools: list[str] | None = Field(
        None, max_length=100, description="first-party and MCP tool names; null: the run's defaults"
    )
    knowledge: list[KnowledgeScope] = Field(default_factory=list, max_length=2)
    memory: bool = Field(True, description="recall the user's memories and offer `remember`")
    delegates: list[str] = Field(default_factory=list, max_length=20, description="slugs of agents it may hand work to")
    starter_prompts: list[StarterPrompt] = Field(default_factory=list, max_length=MAX_STARTERS)
    approval: dict[str, ApprovalOverride] = Field(
        default_factory=dict, max_length=100, description="per tool: stricter than the tool's own policy"
    )
    classification: Classification = Field("standard", description="the floor of its chats' classification")
    review_mode: ReviewMode = Field(
        "autonomous", description="who reviews its acting calls: the gates only, a person each time, or the judge"
    )
    output_schema: dict[str, Any] | None = Field(
        None, description="a JSON Schema of an object: the run's final answer is validated structured output"
    )


class AgentCreate(AgentFields):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"name": "Contract reviewer", "slug": "contract-reviewer", "instructions": "Review..."}]
        }
    )

    slug: str = Field(pattern=SLUG_PATTERN, description="unique in the org: 2-64 lower-case letters, digits, `-`")
    visibility: Visibility = Field("private", description="`org` needs an org admin")


class AgentPatch(BaseModel):
    name: str | None = Field(None, min_length=1, max_length=100)
    description: str | None = Field(None, max_length=2000)
    instructions: str | None = Field(None, min_length=1, max_length=32_000)
    model: str | None = Field(None, max_length=200)
    tools: list[str] | None = Field(None, max_length=100)
    knowledge: list[KnowledgeScope] | None = Field(None, max_length=2)
    memory: bool | None = None
    delegates: list[str] | None = Field(None, max_length=20)
    starter_prompts: list[StarterPrompt] | None = Field(None, max_length=MAX_STARTERS)
    approval: dict[str, ApprovalOverride] | None = Field(None, max_length=100)
    classification: Classification | None = None
    review_mode: ReviewMode | None = None
    output_schema: dict[str, Any] | None = None
    slug: str | None = Field(None, pattern=SLUG_PATTERN)
    visibility: Visibility | None = None
    publish: bool = Field(True, description="false: store the new version without publishing it (a draft)")


class Agent(AgentFields):
    id: UUID
    slug: str
    visibility: Visibility
    builtin: bool = Field(description="the org's built-in `assistant`")
    owner_id: UUID | None
    published_version: int = Field(description="the version runs use")
    latest_version: int
    editable: bool = Field(description="the caller may change it")
    created_at: datetime
    updated_at: datetime


class AgentList(BaseModel):
    items: list[Agent]


class AgentVersion(BaseModel):
    version: int
    created_at: datetime
    created_by: UUID | None
    published: bool


class AgentVersionList(BaseModel):
    items: list[AgentVersion]


class AgentVersionDetail(AgentVersion):
    config: AgentFields


class AgentChange(BaseModel):
    field: str
    a: Any = Field(description="its value in version `a`")
    b: Any = Field(description="its value in version `b`")


class AgentDiff(BaseModel):
    a: int
    b: int
    changes: list[AgentChange]


class AgentDocument(AgentFields):
    """An agent as a portable document: no ids, no owner, no secrets; tools and delegates by name."""

    format: Literal["personal-agent.agent/v1"] = "personal-agent.agent/v1"
    slug: str = Field(pattern=SLUG_PATTERN)


class AgentImport(BaseModel):
    document: AgentDocument
    slug: str | None = Field(None, pattern=SLUG_PATTERN, description="a slug other than the document's")
    visibility: Visibility = "private"


_NULLABLE = {"model", "tools", "output_schema"}  # null is a value: the default model, default tools, no schema


async def _known_tools(principal: Principal) -> set[str]:
    """The tools the caller may give a run: first-party and the org's MCP tools (an agent never widens them)."""
    return set(first_party_names()) | {t["name"] for t in await mcp_service.org_tools(principal.org_id)}


def _config(body: AgentFields) -> AgentConfig:
    try:
        return AgentConfig.model_validate(body.model_dump(exclude={"slug", "visibility", "format"}))
    except ValidationError as exc:
        raise InvalidInput(str(exc.errors()[0]["msg"]), code="invalid_agent") from exc


@router.post("", status_code=201, operation_id="create_agent", response_model=Agent)
async def create_agent(body: AgentCreate, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.create(principal, body.slug, body.visibility, _config(body), await _known_tools(principal))


@router.get("", operation_id="list_agents", response_model=AgentList)
async def list_agents(
    principal: CurrentPrincipal,
    q: Annotated[str | None, Query(max_length=200, description="words in the slug, name or description")] = None,
) -> dict[str, Any]:
    """The agents the caller sees: the org's shared ones, the built-in `assistant` and their own."""
    return {"items": await service.list_agents(principal, q)}


@router.post("/import", status_code=201, operation_id="import_agent", response_model=Agent)
async def import_agent(body: AgentImport, principal: CurrentPrincipal) -> dict[str, Any]:
    document = body.document.model_dump()
    return await portable.import_agent(
        principal, document, await _known_tools(principal), slug=body.slug, visibility=body.visibility
    )


@router.get("/{agent_id}", operation_id="get_agent", response_model=Agent)
async def get_agent(agent_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.get(principal, agent_id)


@router.patch("/{agent_id}", operation_id="update_agent", response_model=Agent)
async def update_agent(agent_id: UUID, body: AgentPatch, principal: CurrentPrincipal) -> dict[str, Any]:
    """A new version from the latest with the fields given, published unless `publish` is false."""
    given = body.model_dump(exclude_unset=True, exclude={"slug", "visibility", "publish"})
    changes = {k: v for k, v in given.items() if v is not None or k in _NULLABLE}
    known = await _known_tools(principal) if changes else set()
    return await service.update(
        principal, agent_id, changes, known, slug=body.slug, visibility=body.visibility, publish=body.publish
    )


@router.delete("/{agent_id}", status_code=204, operation_id="delete_agent")
async def delete_agent(agent_id: UUID, principal: CurrentPrincipal) -> Response:
    await service.delete(principal, agent_id)
    return Response(status_code=204)


@router.get("/{agent_id}/versions", operation_id="list_agent_versions", response_model=AgentVersionList)
async def list_agent_versions(agent_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    return {"items": await service.list_versions(principal, agent_id)}


@router.get("/{agent_id}/versions/{version}", operation_id="get_agent_version", response_model=AgentVersionDetail)
async def get_agent_version(agent_id: UUID, version: VersionNumber, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.get_version(principal, agent_id, version)


@router.post("/{agent_id}/versions/{version}/publish", operation_id="publish_agent_version", response_model=Agent)
async def publish_agent_version(agent_id: UUID, version: VersionNumber, principal: CurrentPrincipal) -> dict[str, Any]:
    """Make this version the one runs use (roll back or forward)."""
    return await service.publish_version(principal, agent_id, version)


@router.get("/{agent_id}/versions/{a}/diff/{b}", operation_id="diff_agent_versions", response_model=AgentDiff)
async def diff_agent_versions(
    agent_id: UUID, a: VersionNumber, b: VersionNumber, principal: CurrentPrincipal
) -> dict[str, Any]:
    return await service.diff(principal, agent_id, a, b)


@router.get("/{agent_id}/export", operation_id="export_agent", response_model=AgentDocument)
async def export_agent(agent_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    return await portable.export(principal, agent_id)
