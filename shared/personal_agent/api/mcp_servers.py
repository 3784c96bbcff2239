"""Admin API for an org's MCP servers: register (auth headers write-only), read, change, remove, discover tools."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from personal_agent.api.deps import OrgAdmin
from personal_agent.mcp_servers import service

router = APIRouter(prefix="/api/v1/admin/mcp-servers", tags=["mcp-servers"])

NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{0,30}$"


class ToolPolicy(BaseModel):
    acts: bool = Field(False, description="the tool changes the world (the confidence gate applies)")
    approval: Literal["never", "gate", "always"] = Field("gate", description="who decides whether a call runs")


class McpServerIn(BaseModel):
    name: str = Field(pattern=NAME_PATTERN, description="lower-case letters, digits and `-`")
    url: str = Field(max_length=2000, pattern=r"^(https?://\S+|[^\s].*)$", description="streamable-HTTP URL")
    transport: Literal["http", "stdio"] = Field("http", description="`stdio` (a command line as `url`): local only")
    trust_tier: int = Field(ge=0, le=2, description="0 untrusted, 1 regulated, 2 internal")
    headers: dict[str, str] | None = Field(
        None, max_length=20, description="auth headers, sealed at rest and never returned"
    )
    allowed_tools: list[str] | None = Field(None, max_length=200, description="null: every tool the server lists")
    tool_policies: dict[str, ToolPolicy] = Field(default_factory=dict, max_length=200)
    enabled: bool = True


class McpServerPatch(BaseModel):
    name: str | None = Field(None, pattern=NAME_PATTERN)
    url: str | None = Field(None, max_length=2000, pattern=r"^(https?://\S+|[^\s].*)$")
    trust_tier: int | None = Field(None, ge=0, le=2)
    headers: dict[str, str] | None = Field(None, max_length=20, description="replaces every header; `{}` clears")
    allowed_tools: list[str] | None = Field(None, max_length=200)
    tool_policies: dict[str, ToolPolicy] | None = Field(None, max_length=200)
    enabled: bool | None = None


class McpServerOut(BaseModel):
    id: UUID
    name: str
    url: str
    transport: Literal["http", "stdio"]
    trust_tier: int
    header_names: list[str] = Field(description="the names of its auth headers (their values are never returned)")
    has_headers: bool
    allowed_tools: list[str] | None
    tool_policies: dict[str, ToolPolicy]
    enabled: bool
    created_at: datetime


class McpServerList(BaseModel):
    items: list[McpServerOut]


class McpToolOut(BaseModel):
    name: str = Field(description="the name runs ask for: `{server}_{tool}`")
    remote_name: str
    description: str
    server_id: UUID
    server: str
    trust_tier: int
    acts: bool
    approval: Literal["never", "gate", "always"]
    schema_hash: str


class McpDiscovery(BaseModel):
    server_id: UUID
    reachable: bool
    error: str | None = Field(description="why the server could not be reached")
    tools: list[McpToolOut]


def _check_headers(headers: dict[str, str] | None) -> None:
    from personal_agent.errors import InvalidInput

    for name, value in (headers or {}).items():
        if not name or len(name) > 100 or not all(c.isalnum() or c == "-" for c in name):
            raise InvalidInput("a header name has letters, digits and `-`", code="invalid_header")
        if len(value) > 8192 or any(c in value for c in "\r\n\x00"):
            raise InvalidInput("a header value has at most 8192 characters and no line breaks", code="invalid_header")


def _policies(policies: dict[str, ToolPolicy] | None) -> dict[str, Any] | None:
    return None if policies is None else {k: v.model_dump() for k, v in policies.items()}


@router.post("", status_code=201, operation_id="create_mcp_server", response_model=McpServerOut)
async def create_mcp_server(body: McpServerIn, principal: OrgAdmin) -> dict[str, Any]:
    _check_headers(body.headers)
    values = body.model_dump()
    values["tool_policies"] = _policies(body.tool_policies)
    return await service.create(principal.org_id, values)


@router.get("", operation_id="list_mcp_servers", response_model=McpServerList)
async def list_mcp_servers(principal: OrgAdmin) -> dict[str, Any]:
    return {"items": await service.list_servers(principal.org_id)}


@router.get("/{server_id}", operation_id="get_mcp_server", response_model=McpServerOut)
async def get_mcp_server(server_id: UUID, principal: OrgAdmin) -> dict[str, Any]:
    return await service.get(principal.org_id, server_id)


@router.patch("/{server_id}", operation_id="update_mcp_server", response_model=McpServerOut)
async def update_mcp_server(server_id: UUID, body: McpServerPatch, principal: OrgAdmin) -> dict[str, Any]:
    _check_headers(body.headers)
    values = body.model_dump(exclude_unset=True)
    for required in ("name", "url", "trust_tier", "tool_policies", "enabled"):
        if required in values and values[required] is None:
            del values[required]  # null for a required field: left as it is
    if "tool_policies" in values:
        values["tool_policies"] = _policies(body.tool_policies)
    return await service.update(principal.org_id, server_id, values)


@router.delete("/{server_id}", status_code=204, operation_id="delete_mcp_server")
async def delete_mcp_server(server_id: UUID, principal: OrgAdmin) -> Response:
    await service.delete(principal.org_id, server_id)
    return Response(status_code=204)


@router.get("/{server_id}/tools", operation_id="discover_mcp_server_tools", response_model=McpDiscovery)
async def discover_mcp_server_tools(server_id: UUID, principal: OrgAdmin, refresh: bool = True) -> dict[str, Any]:
    """Connect to the server now (or, with `refresh=false`, reuse a discovery younger than five minutes)."""
    return await service.server_tools(principal.org_id, server_id, refresh=refresh)
