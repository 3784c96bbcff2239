"""The tools a caller may give a run (`POST /chats/{id}/runs` `tools`): first-party and the org's MCP tools."""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from fastapi import APIRouter
from pydantic import BaseModel, Field

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.mcp_servers import service as mcp_service
from personal_agent.tools.registry import default_tool_names, first_party_names, get_tool

router = APIRouter(prefix="/api/v1", tags=["tools"])


class ToolOut(BaseModel):
    name: str
    description: str
    source: Literal["first_party", "mcp"]
    server_id: UUID | None
    server: str | None
    trust_tier: int = Field(description="the trust tier of the tool's source (first-party: 2)")
    acts: bool = Field(description="the tool changes the world")
    approval: Literal["never", "gate", "always"]
    default: bool = Field(description="a run gets it when it names no tools")


class ToolList(BaseModel):
    items: list[ToolOut]


@router.get("/tools", operation_id="list_tools", response_model=ToolList)
async def list_tools(principal: CurrentPrincipal) -> dict[str, Any]:
    defaults = set(default_tool_names())
    items: list[dict[str, Any]] = []
    for name in first_party_names():
        tool = get_tool(name)
        if tool is None:
            continue
        approval = "always" if tool.requires_approval else "gate"
        items.append(
            {
                "name": name,
                "description": tool.description,
                "source": "first_party",
                "server_id": None,
                "server": None,
                "trust_tier": 2,
                "acts": tool.acts,
                "approval": approval,
                "default": name in defaults,
            }
        )
    for offered in await mcp_service.org_tools(principal.org_id):
        items.append({**offered, "source": "mcp", "default": False})
    return {"items": items}
