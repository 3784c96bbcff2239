"""Projects for the API: create, list, read, change, delete, members, and moving chats in and out. A project the
caller is not a member of is 404, as another org's is; viewers read, editors also write in its chats and move them,
owners change the project and its members. Each project gets a knowledge collection of its own (its files) unless
one the caller reads is chosen; the members of its own collection follow the project's (owner, writer, reader)."""

from __future__ import annotations

import secrets
from typing import Any
from uuid import UUID

from personal_agent.agents import service as agent_service
from personal_agent.chats import store as chat_store
from personal_agent.chats.store import ChatRow
from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.errors import Conflict, Forbidden, InvalidInput, NotFound
from personal_agent.identity.principal import Principal
from personal_agent.knowledge import collections
from personal_agent.knowledge.transaction import knowledge_transaction
from personal_agent.projects import store
from personal_agent.projects.store import ProjectMember, ProjectRow

MAX_INSTRUCTIONS = 8000
_COLLECTION_ROLE = {"owner": "owner", "editor": "writer", "viewer": "reader"}


def not_found() -> NotFound:
    return NotFound("project not found", code="project_not_found")


def _name(name: str) -> str:
    cleaned = " ".join(name.split())
    if not 1 <= len(cleaned) <= 100:
        raise InvalidInput("a project's name has 1 to 100 characters", code="invalid_project_name")
    return cleaned


def _instructions(text: str) -> str:
    if len(text) > MAX_INSTRUCTIONS:
        raise InvalidInput(
            f"a project's instructions hold at most {MAX_INSTRUCTIONS} characters", code="instructions_too_long"
        )
    return text.strip()


async def _agent_id(principal: Principal, slug: str | None) -> UUID | None:
    return (await agent_service.resolve_slug(principal, slug)).id if slug else None


async def _collection(principal: Principal, name: str, chosen: UUID | None) -> tuple[UUID, bool]:
    """The chosen collection (the caller must read it: 404 otherwise), else a new one of the project's own."""
    if chosen is not None:
        async with knowledge_transaction(principal.org_id, principal.user_id) as conn:
            await collections.check_member(conn, chosen, principal.user_id, write=False)
        return chosen, False
    empty = collections.Members([], [], [])
    description = f"The files of the project {name!r}."
    try:
        made = await collections.create(principal.org_id, principal.user_id, f"Project: {name}", description, empty)
    except Conflict:  # a collection of that name exists: this one's name says it is another
        label = f"Project: {name[:80]} ({secrets.token_hex(3)})"
        made = await collections.create(principal.org_id, principal.user_id, label, description, empty)
    return UUID(str(made["id"])), True


async def _member_row(conn: Conn, principal: Principal, project_id: UUID) -> ProjectRow:
    row = await store.for_member(conn, project_id, principal.user_id)
    if row is None:
        raise not_found()
    return row


async def _owned(conn: Conn, principal: Principal, project_id: UUID) -> ProjectRow:
    row = await _member_row(conn, principal, project_id)
    if row.role != "owner":
        raise Forbidden("only the project's owners may change it", code="not_project_owner")
    return row


async def create(
    principal: Principal, name: str, instructions: str, agent: str | None, collection_id: UUID | None
) -> dict[str, Any]:
    """A new project owned by the caller, with its own collection unless `collection_id` is chosen."""
    name, instructions = _name(name), _instructions(instructions)
    agent_id = await _agent_id(principal, agent)
    collection = await _collection(principal, name, collection_id)
    async with org_transaction(principal.org_id) as conn:
        project_id = await store.insert(
            conn, principal.org_id, principal.user_id, name, instructions, agent_id, collection
        )
        return await _view(conn, principal, project_id)


async def _view(conn: Conn, principal: Principal, project_id: UUID) -> dict[str, Any]:
    row = await _member_row(conn, principal, project_id)
    return {**row.__dict__, "members": await store.members(conn, project_id)}


async def list_projects(principal: Principal) -> list[ProjectRow]:
    async with org_transaction(principal.org_id) as conn:
        return await store.list_for_member(conn, principal.user_id)


async def get(principal: Principal, project_id: UUID) -> dict[str, Any]:
    async with org_transaction(principal.org_id) as conn:
        return await _view(conn, principal, project_id)


async def update(principal: Principal, project_id: UUID, fields: dict[str, Any]) -> dict[str, Any]:
    """Change what `fields` holds (`name`, `instructions`, `agent`: a slug, or None for none); owners only."""
    changes: dict[str, Any] = {}
    if fields.get("name") is not None:
        changes["name"] = _name(fields["name"])
    if fields.get("instructions") is not None:
        changes["instructions"] = _instructions(fields["instructions"])
    if "agent" in fields:
        changes["agent_id"] = await _agent_id(principal, fields["agent"])
    async with org_transaction(principal.org_id) as conn:
        await _owned(conn, principal, project_id)
        await store.update(conn, project_id, changes)
        return await _view(conn, principal, project_id)


async def delete(principal: Principal, project_id: UUID) -> None:
    """Delete the project (owners only): its chats move out and stay their owners', its memories go, and so does
    the collection made for it (with its files)."""
    async with org_transaction(principal.org_id) as conn:
        row = await _owned(conn, principal, project_id)
        own = await store.owns_collection(conn, project_id)
        await store.delete(conn, project_id)
    if own and row.collection_id is not None:
        try:
            await collections.delete(principal.org_id, principal.user_id, row.collection_id)
        except NotFound:  # deleted already
            pass


async def put_member(
    principal: Principal, project_id: UUID, user: UUID | None, email: str | None, role: str
) -> list[ProjectMember]:
    """Add a member of the org (or change their role); owners only. 422 `unknown_member` for anyone else."""
    async with org_transaction(principal.org_id) as conn:
        await _owned(conn, principal, project_id)
        member = await store.org_member(conn, principal.org_id, user, email)
        if member is None:
            raise InvalidInput("that person is not a member of the organisation", code="unknown_member")
        if member == principal.user_id and role != "owner":
            await _keep_an_owner(conn, project_id, member)
        await store.put_member(conn, principal.org_id, project_id, member, role)
        people = await store.members(conn, project_id)
    await _sync_collection(principal, project_id, people)
    return people


async def remove_member(principal: Principal, project_id: UUID, user_id: UUID) -> list[ProjectMember]:
    """Remove a member (owners only; anyone may leave); 409 `last_project_owner` for the last owner."""
    async with org_transaction(principal.org_id) as conn:
        if user_id != principal.user_id:
            await _owned(conn, principal, project_id)
        else:
            await _member_row(conn, principal, project_id)
        await _keep_an_owner(conn, project_id, user_id)
        if not await store.remove_member(conn, project_id, user_id):
            raise NotFound("no such member of the project", code="member_not_found")
        people = await store.members(conn, project_id)
    await _sync_collection(principal, project_id, people)
    return people


async def _keep_an_owner(conn: Conn, project_id: UUID, leaving: UUID) -> None:
    owners = [m.user_id for m in await store.members(conn, project_id) if m.role == "owner"]
    if owners == [leaving]:
        raise Conflict("a project keeps at least one owner", code="last_project_owner")


async def _sync_collection(principal: Principal, project_id: UUID, people: list[ProjectMember]) -> None:
    """The project's own collection has the project's members (owners, writers for editors, readers for viewers)."""
    async with org_transaction(principal.org_id) as conn:
        own = await store.owns_collection(conn, project_id)
        row = await store.for_member(conn, project_id, principal.user_id)
    if not own or row is None or row.collection_id is None:
        return
    by_role: dict[str, list[str]] = {"owner": [], "writer": [], "reader": []}
    for person in people:
        by_role[_COLLECTION_ROLE[person.role]].append(str(person.user_id))
    members = collections.Members(by_role["owner"], by_role["writer"], by_role["reader"])
    admin = principal.is_org_admin
    await collections.update(
        principal.org_id,
        principal.user_id,
        row.collection_id,
        name=None,
        description=None,
        members=members,
        admin=admin,
    )


async def move_chat(principal: Principal, chat_id: UUID, project_id: UUID | None) -> ChatRow:
    """Move a chat into `project_id` (None: out of its project). The chat's owner or an editor of its project may;
    the target needs the caller as an editor or owner. A restricted or a temporary chat joins no project (its
    members would read it)."""
    async with org_transaction(principal.org_id) as conn:
        chat = await chat_store.get_visible(conn, chat_id, principal.user_id, write=True)
        if chat is None:
            if await chat_store.get_visible(conn, chat_id, principal.user_id) is not None:
                raise Forbidden("viewers of a project only read its chats", code="project_read_only")
            raise NotFound("chat not found", code="chat_not_found")
        if project_id is not None:
            await _check_target(conn, principal, project_id, chat)
        moved = await chat_store.move_to_project(conn, chat_id, project_id)
    assert moved is not None
    return moved


async def _check_target(conn: Conn, principal: Principal, project_id: UUID, chat: ChatRow) -> None:
    role = await store.role_of(conn, project_id, principal.user_id)
    if role is None:
        raise not_found()
    if role == "viewer":
        raise Forbidden("viewers of a project cannot add chats to it", code="project_read_only")
    if chat.classification == "restricted":
        raise Conflict("a restricted chat stays private: it cannot join a project", code="chat_restricted")
    if await chat_store.is_temporary(conn, chat.id):
        raise Conflict("a temporary chat cannot join a project", code="chat_temporary")


async def check_reader(principal: Principal, project_id: UUID) -> None:
    """404 unless the caller is a member of the project."""
    async with org_transaction(principal.org_id) as conn:
        await _member_row(conn, principal, project_id)
