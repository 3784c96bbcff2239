"""Named collections (issue 36, item 5): "HR policies", "Contract templates". Each has owners, writers and readers,
members of the org named by user id or e-mail. Owners (and org admins) change a collection and its members;
writers add documents; readers search it. A collection the caller is not a member of is 404, as another org's is;
SQL holds the same rules (migration 0030's policies)."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from psycopg import errors as pg_errors

from personal_agent.db.pool import Conn
from personal_agent.errors import Conflict, Forbidden, InvalidInput, NotFound
from personal_agent.knowledge import collections_store as cstore
from personal_agent.knowledge import objects
from personal_agent.knowledge.transaction import knowledge_transaction

MAX_MEMBERS = 500
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def is_collection_id(value: str) -> bool:
    return bool(_UUID.match(value))


@dataclass(frozen=True)
class Members:
    """Who is given each role, as the caller wrote them (user ids or e-mails)."""

    owners: list[str]
    writers: list[str]
    readers: list[str]


def not_found() -> NotFound:
    return NotFound("collection not found", code="collection_not_found")


async def _resolve(conn: Conn, org_id: UUID, creator: UUID, members: Members) -> dict[UUID, str]:
    """{user id: role}, the highest role where a person is named twice; the creator stays an owner when no owner
    is named. 422 `unknown_member` for anyone who is not a member of the org."""
    named = [*members.owners, *members.writers, *members.readers]
    if len(named) > MAX_MEMBERS:
        raise InvalidInput(f"a collection has at most {MAX_MEMBERS} members", code="too_many_members")
    ids = [UUID(n) for n in named if is_collection_id(n.strip().lower())]
    emails = [n.strip().lower() for n in named if not is_collection_id(n.strip().lower())]
    found = await cstore.org_users(conn, org_id, ids, emails)
    roles: dict[UUID, str] = {}
    for role, people in (("reader", members.readers), ("writer", members.writers), ("owner", members.owners)):
        for person in people:
            user = found.get(person.strip().lower())
            if user is None:
                raise InvalidInput(f"{person!r} is not a member of the organisation", code="unknown_member")
            roles[user] = role  # later roles are higher: owner > writer > reader
    if "owner" not in roles.values():
        roles[creator] = "owner"
    return roles


async def _view(conn: Conn, row: cstore.Collection, user_id: UUID) -> dict[str, Any]:
    people = await cstore.members(conn, row.id)
    by_role = {role: [str(m.user_id) for m in people if m.role == role] for role in cstore.ROLES}
    mine = next((m.role for m in people if m.user_id == user_id), None)
    return {
        "id": row.id,
        "name": row.name,
        "description": row.description,
        "owners": by_role["owner"],
        "writers": by_role["writer"],
        "readers": by_role["reader"],
        "members": [{"user_id": m.user_id, "email": m.email, "role": m.role} for m in people],
        "role": mine,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }


def _name(name: str) -> str:
    name = " ".join(name.split())
    if not 1 <= len(name) <= 100:
        raise InvalidInput("a collection's name has 1 to 100 characters", code="invalid_collection_name")
    if name in ("org", "personal") or is_collection_id(name) or name.startswith("chat:"):
        raise InvalidInput("that name is reserved", code="invalid_collection_name")
    return name


async def create(
    org_id: UUID, user_id: UUID, name: str, description: str, members: Members, *, admin: bool = False
) -> dict[str, Any]:
    """A new collection whose owner is the caller unless others are named; 409 `collection_exists`."""
    name = _name(name)
    try:
        async with knowledge_transaction(org_id, user_id, admin=admin) as conn:
            row = await cstore.insert(conn, org_id, name, description, user_id)
            await cstore.replace_members(conn, org_id, row.id, {user_id: "owner"}, user_id)  # then as its owner:
            await cstore.replace_members(conn, org_id, row.id, await _resolve(conn, org_id, user_id, members), user_id)
            return await _view(conn, row, user_id)
    except pg_errors.UniqueViolation:
        raise Conflict(f"a collection named {name!r} exists", code="collection_exists") from None


async def list_collections(org_id: UUID, user_id: UUID, *, admin: bool = False) -> list[dict[str, Any]]:
    async with knowledge_transaction(org_id, user_id, admin=admin) as conn:
        return [await _view(conn, row, user_id) for row in await cstore.list_visible(conn)]


async def get(org_id: UUID, user_id: UUID, collection_id: UUID, *, admin: bool = False) -> dict[str, Any]:
    async with knowledge_transaction(org_id, user_id, admin=admin) as conn:
        row = await cstore.get(conn, collection_id)
        if row is None:
            raise not_found()
        return await _view(conn, row, user_id)


async def _managed(conn: Conn, collection_id: UUID, user_id: UUID, admin: bool) -> cstore.Collection:
    """The collection if the caller may change it: 404 when they cannot see it, 403 when they only read or write."""
    row = await cstore.get(conn, collection_id)
    if row is None:
        raise not_found()
    if not admin and await cstore.role_of(conn, collection_id, user_id) != "owner":
        raise Forbidden("only the collection's owners or an org admin may change it", code="not_collection_owner")
    return row


async def update(
    org_id: UUID,
    user_id: UUID,
    collection_id: UUID,
    *,
    name: str | None,
    description: str | None,
    members: Members | None,
    admin: bool = False,
) -> dict[str, Any]:
    """Rename, describe, or replace the members (owners only; the caller stays an owner unless others are)."""
    try:
        async with knowledge_transaction(org_id, user_id, admin=admin) as conn:
            await _managed(conn, collection_id, user_id, admin)
            row = await cstore.update(conn, collection_id, _name(name) if name is not None else None, description)
            if row is None:
                raise not_found()
            if members is not None:
                await cstore.replace_members(
                    conn, org_id, collection_id, await _resolve(conn, org_id, user_id, members), user_id
                )
            return await _view(conn, row, user_id)
    except pg_errors.UniqueViolation:
        raise Conflict(f"a collection named {name!r} exists", code="collection_exists") from None


async def delete(org_id: UUID, user_id: UUID, collection_id: UUID, *, admin: bool = False) -> None:
    """Delete the collection with its documents, chunks and sources, then the documents' files."""
    async with knowledge_transaction(org_id, user_id, admin=admin) as conn:
        await _managed(conn, collection_id, user_id, admin)
        keys = await cstore.object_keys(conn, collection_id)
        if not await cstore.delete(conn, collection_id):
            raise not_found()
    for key in keys:
        await asyncio.to_thread(objects.delete_object, key)


async def check_member(conn: Conn, collection_id: UUID, user_id: UUID, *, write: bool) -> None:
    """404 unless the caller is a member; 403 `not_collection_writer` when writing needs more than reading."""
    role = await cstore.role_of(conn, collection_id, user_id)
    if role is None:
        raise not_found()
    if write and role == "reader":
        raise Forbidden("readers of a collection may not add to it", code="not_collection_writer")


async def readable(conn: Conn, user_id: UUID | None, entries: tuple[str, ...] | None) -> list[str]:
    """The named collections (ids as text) `user_id` may read: all of theirs (`entries` None), or those of
    `entries` (ids or names, e.g. an agent's) they are a member of; the rest are left out."""
    if user_id is None:
        return []
    mine = {str(c) for c in await cstore.readable_ids(conn, user_id)}
    if entries is None:
        return sorted(mine)
    chosen: list[str] = []
    for entry in entries:
        if is_collection_id(entry):
            found = entry
        else:
            row = await cstore.by_name(conn, entry)
            found = str(row.id) if row is not None else ""
        if found in mine and found not in chosen:
            chosen.append(found)
    return chosen
