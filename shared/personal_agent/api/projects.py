"""Projects: chats grouped with shared instructions, a default agent, a knowledge collection and a memory scope;
members are owners, editors or viewers of the org. Logic in `personal_agent.projects.service`."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import APIRouter, Body, Response
from pydantic import BaseModel, ConfigDict, Field, model_validator

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.projects import service
from personal_agent.projects.store import ProjectMember, ProjectRow

router = APIRouter(prefix="/api/v1/projects", tags=["projects"])

Role = Literal["owner", "editor", "viewer"]
Slug = Annotated[str, Field(pattern=r"^[a-z0-9-]{2,64}$")]


class ProjectCreate(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"name": "Q3 launch", "instructions": "Answer as our launch team."}]}
    )

    name: str = Field(min_length=1, max_length=100)
    instructions: str = Field("", max_length=8000, description="added to the agent's instructions in its chats")
    agent: Slug | None = Field(None, description="the default agent's slug (a chat's own agent goes first)")
    collection_id: UUID | None = Field(
        None, description="a knowledge collection the caller reads; omitted: one is made for the project"
    )


class ProjectUpdate(BaseModel):
    name: str | None = Field(None, min_length=1, max_length=100)
    instructions: str | None = Field(None, max_length=8000)
    agent: Slug | None = Field(None, description="the default agent's slug; null: none")


class Member(BaseModel):
    user_id: UUID
    email: str | None
    name: str | None
    role: Role


class MemberPut(BaseModel):
    user_id: UUID | None = None
    email: str | None = Field(None, max_length=320)
    role: Role = "viewer"

    @model_validator(mode="after")
    def _someone(self) -> MemberPut:
        if (self.user_id is None) == (self.email is None):
            raise ValueError("name the member by `user_id` or by `email`")
        return self


class Project(BaseModel):
    id: UUID
    name: str
    instructions: str
    agent: str | None = Field(description="the default agent's slug (null: none)")
    collection_id: UUID | None = Field(description="the project's knowledge collection (upload its files there)")
    role: Role = Field(description="the caller's role in it")
    created_at: datetime
    updated_at: datetime


class ProjectDetail(Project):
    members: list[Member]


class ProjectList(BaseModel):
    items: list[Project]


@router.post("", status_code=201, operation_id="create_project", response_model=ProjectDetail)
async def create_project(body: ProjectCreate, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.create(principal, body.name, body.instructions, body.agent, body.collection_id)


@router.get("", operation_id="list_projects", response_model=ProjectList)
async def list_projects(principal: CurrentPrincipal) -> dict[str, list[ProjectRow]]:
    """The projects the caller is a member of, most recently changed first."""
    return {"items": await service.list_projects(principal)}


@router.get("/{project_id}", operation_id="get_project", response_model=ProjectDetail)
async def get_project(project_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.get(principal, project_id)


@router.patch("/{project_id}", operation_id="update_project", response_model=ProjectDetail)
async def update_project(project_id: UUID, body: ProjectUpdate, principal: CurrentPrincipal) -> dict[str, Any]:
    """Owners only (403 `not_project_owner`)."""
    return await service.update(principal, project_id, body.model_dump(include=body.model_fields_set))


@router.delete("/{project_id}", status_code=204, operation_id="delete_project")
async def delete_project(project_id: UUID, principal: CurrentPrincipal) -> Response:
    """Owners only: its chats move out (their owners keep them); its memories and its own collection go."""
    await service.delete(principal, project_id)
    return Response(status_code=204)


@router.post("/{project_id}/members", operation_id="add_project_member", response_model=list[Member])
async def add_project_member(
    project_id: UUID, principal: CurrentPrincipal, body: Annotated[MemberPut, Body()]
) -> list[ProjectMember]:
    """Add a member of the org or change their role (owners only; 422 `unknown_member` for anyone else)."""
    return await service.put_member(principal, project_id, body.user_id, body.email, body.role)


@router.delete("/{project_id}/members/{user_id}", operation_id="remove_project_member", response_model=list[Member])
async def remove_project_member(project_id: UUID, user_id: UUID, principal: CurrentPrincipal) -> list[ProjectMember]:
    """Owners remove anyone; a member may leave; 409 `last_project_owner` for the last owner."""
    return await service.remove_member(principal, project_id, user_id)
