"""Agents for the API and the launch: create, read, change (each change a new immutable version), publish a
version, diff two, export and import. A private agent is its owner's alone (anyone else: 404); making one
`org`-visible needs an org admin. Names the org must know (tools) come from the caller, which reads them from the
floors above (first-party tools, MCP discovery)."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from pydantic import ValidationError

from personal_agent.agents import store
from personal_agent.agents.config import (
    BUILTIN_SLUG,
    AgentConfig,
    builtin_config,
    check_output_schema,
)
from personal_agent.agents.store import AgentRow
from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.errors import Conflict, Forbidden, InvalidInput, NotFound
from personal_agent.identity.principal import Principal


@dataclass(frozen=True)
class LaunchAgent:
    """The agent a run launches with: its published version (or the one asked for) and that version's config."""

    id: UUID
    slug: str
    version: int
    config: AgentConfig
    delegates: tuple[LaunchAgent, ...] = ()
    """With `for_launch(with_delegates=True)`: its delegates the user sees, each at its published version."""
    sample_rate: float = 0.0
    """The share of its production runs the org samples into an LLM judge (`agent_sampling`; 0: off)."""


def _view(row: AgentRow, config: dict[str, Any], principal: Principal) -> dict[str, Any]:
    return {
        **AgentConfig.model_validate(config).model_dump(),
        "id": row.id,
        "slug": row.slug,
        "visibility": row.visibility,
        "builtin": row.builtin,
        "owner_id": row.owner_id,
        "published_version": row.published_version,
        "latest_version": row.latest_version,
        "editable": _may_edit(row, principal),
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }


def _may_edit(row: AgentRow, principal: Principal) -> bool:
    return principal.is_org_admin or (row.owner_id is not None and row.owner_id == principal.user_id)


def _not_found() -> NotFound:
    return NotFound("agent not found", code="agent_not_found")


async def ensure_builtin(conn: Conn, org_id: UUID) -> AgentRow:
    """The org's built-in `assistant`, created on first use (editable like any other agent). A fresh org's first
    requests at once all find none: the insert of each but the first waits for it and does nothing, and then reads
    the one it made (read committed: a new statement sees it)."""
    row = await store.builtin(conn)
    if row is not None:
        return row
    created = await store.insert(conn, org_id, None, BUILTIN_SLUG, "org", builtin_config().model_dump(), builtin=True)
    if created is None:
        created = await store.builtin(conn)  # another request created it since
    if created is None:  # a person's agent took the slug first: the built-in is the default config, unnamed
        raise Conflict(f"an agent already uses the slug {BUILTIN_SLUG!r}", code="slug_taken")
    return created


async def _check(
    conn: Conn, principal: Principal, config: AgentConfig, known_tools: Collection[str], self_slug: str | None
) -> None:
    """Nothing is stored on bad input: unknown tools (422 `unknown_tool`), delegates the caller does not see
    (422 `unknown_delegate`), an output schema that is not one (422 `invalid_output_schema`)."""
    for name in [*(config.tools or []), *config.approval]:
        if name not in known_tools:
            raise InvalidInput(f"unknown tool {name!r}", code="unknown_tool", tool=name)
    wanted = [d for d in config.delegates if d != self_slug]
    if self_slug is not None and self_slug in config.delegates:
        raise InvalidInput("an agent cannot delegate to itself", code="unknown_delegate", delegate=self_slug)
    found = await store.existing_slugs(conn, wanted, principal.user_id)
    for slug in wanted:
        if slug not in found:
            raise InvalidInput(f"unknown delegate {slug!r}", code="unknown_delegate", delegate=slug)
    check_output_schema(config.output_schema)


def _not_reserved(slug: str) -> None:
    if slug == BUILTIN_SLUG:
        raise InvalidInput(f"the slug {slug!r} is the built-in assistant's", code="slug_taken", slug=slug)


def _check_visibility(principal: Principal, visibility: str) -> None:
    if visibility == "org" and not principal.is_org_admin:
        raise Forbidden("sharing an agent with the org needs an org admin", code="org_admin_required")


async def create(
    principal: Principal, slug: str, visibility: str, config: AgentConfig, known_tools: Collection[str]
) -> dict[str, Any]:
    _check_visibility(principal, visibility)
    _not_reserved(slug)
    async with org_transaction(principal.org_id) as conn:
        await ensure_builtin(conn, principal.org_id)
        await _check(conn, principal, config, known_tools, slug)
        row = await store.insert(conn, principal.org_id, principal.user_id, slug, visibility, config.model_dump())
        if row is None:
            raise InvalidInput(f"the slug {slug!r} is taken in this org", code="slug_taken", slug=slug)
    return _view(row, config.model_dump(), principal)


async def list_agents(principal: Principal, q: str | None = None) -> list[dict[str, Any]]:
    async with org_transaction(principal.org_id) as conn:
        await ensure_builtin(conn, principal.org_id)
        rows = await store.list_visible(conn, principal.user_id, q)
    return [_view(row, config, principal) for row, config in rows]


async def visible_row(conn: Conn, principal: Principal, agent_id: UUID, *, lock: bool = False) -> AgentRow:
    """The agent if the caller sees it (404 `agent_not_found` otherwise)."""
    row = await store.get_visible(conn, agent_id, principal.user_id, lock=lock)
    if row is None:
        raise _not_found()
    return row


async def _editable(conn: Conn, principal: Principal, agent_id: UUID) -> AgentRow:
    row = await visible_row(conn, principal, agent_id, lock=True)
    if not _may_edit(row, principal):
        raise Forbidden("only the agent's owner or an org admin changes it", code="not_agent_owner")
    return row


async def version_row(conn: Conn, agent_id: UUID, number: int) -> store.VersionRow:
    found = await store.version(conn, agent_id, number)
    if found is None:
        raise NotFound(f"the agent has no version {number}", code="agent_version_not_found")
    return found


async def get(principal: Principal, agent_id: UUID) -> dict[str, Any]:
    async with org_transaction(principal.org_id) as conn:
        row = await visible_row(conn, principal, agent_id)
        published = await version_row(conn, row.id, row.published_version)
    return _view(row, published.config, principal)


async def update(
    principal: Principal,
    agent_id: UUID,
    changes: dict[str, Any],
    known_tools: Collection[str],
    *,
    slug: str | None = None,
    visibility: str | None = None,
    publish: bool = True,
) -> dict[str, Any]:
    """Apply `changes` (AgentConfig fields) to the latest version as a new version, published unless `publish` is
    false; a new slug or visibility changes the agent itself (not versioned)."""
    if visibility is not None:
        _check_visibility(principal, visibility)
    async with org_transaction(principal.org_id) as conn:
        row = await _editable(conn, principal, agent_id)
        if row.builtin and slug is not None and slug != row.slug:
            raise InvalidInput("the built-in assistant keeps its slug", code="builtin_slug")
        if not row.builtin and slug is not None:
            _not_reserved(slug)
        if slug is not None or visibility is not None:
            changed = await store.update_row(conn, row.id, slug, visibility)
            if changed is None:
                raise InvalidInput(f"the slug {slug!r} is taken in this org", code="slug_taken", slug=slug)
            row = changed
        latest = await version_row(conn, row.id, row.latest_version)
        if changes:
            try:
                config = AgentConfig.model_validate({**latest.config, **changes})
            except ValidationError as exc:
                raise InvalidInput(str(exc.errors()[0]["msg"]), code="invalid_agent") from exc
            await _check(conn, principal, config, known_tools, row.slug)
            row = await store.add_version(
                conn, principal.org_id, row, config.model_dump(), principal.user_id, publish=publish
            )
        published = await version_row(conn, row.id, row.published_version)
    return _view(row, published.config, principal)


async def delete(principal: Principal, agent_id: UUID) -> None:
    async with org_transaction(principal.org_id) as conn:
        row = await _editable(conn, principal, agent_id)
        if row.builtin:
            raise Conflict("the built-in assistant cannot be deleted; edit it instead", code="builtin_agent")
        await store.delete(conn, row.id)


def _version_view(row: AgentRow, version: store.VersionRow) -> dict[str, Any]:
    return {
        "version": version.version,
        "created_at": version.created_at,
        "created_by": version.created_by,
        "published": version.version == row.published_version,
    }


async def list_versions(principal: Principal, agent_id: UUID) -> list[dict[str, Any]]:
    async with org_transaction(principal.org_id) as conn:
        row = await visible_row(conn, principal, agent_id)
        return [_version_view(row, v) for v in await store.versions(conn, row.id)]


async def get_version(principal: Principal, agent_id: UUID, number: int) -> dict[str, Any]:
    async with org_transaction(principal.org_id) as conn:
        row = await visible_row(conn, principal, agent_id)
        found = await version_row(conn, row.id, number)
    return {**_version_view(row, found), "config": AgentConfig.model_validate(found.config).model_dump()}


async def publish_version(principal: Principal, agent_id: UUID, number: int) -> dict[str, Any]:
    """Make version `number` the one runs use (a rollback or a roll forward)."""
    async with org_transaction(principal.org_id) as conn:
        row = await _editable(conn, principal, agent_id)
        found = await version_row(conn, row.id, number)
        row = await store.publish(conn, row.id, number)
    return _view(row, found.config, principal)


async def diff(principal: Principal, agent_id: UUID, a: int, b: int) -> dict[str, Any]:
    """The fields that differ between versions `a` and `b`, each with its value in both."""
    async with org_transaction(principal.org_id) as conn:
        row = await visible_row(conn, principal, agent_id)
        left, right = await version_row(conn, row.id, a), await version_row(conn, row.id, b)
    before = AgentConfig.model_validate(left.config).model_dump()
    after = AgentConfig.model_validate(right.config).model_dump()
    changes = [{"field": k, "a": before[k], "b": after[k]} for k in before if before[k] != after[k]]
    return {"a": a, "b": b, "changes": changes}


async def for_launch(
    conn: Conn,
    org_id: UUID,
    user_id: UUID | None,
    *,
    slug: str | None = None,
    agent_id: UUID | None = None,
    with_delegates: bool = False,
    version: int | None = None,
) -> LaunchAgent:
    """The agent a run launches with (its published version): by slug, by id (a chat's binding), else the org's
    built-in assistant. One the user does not see is 404 `agent_not_found`."""
    if slug is not None:
        row = await store.by_slug(conn, slug, user_id)
        if row is None and slug == BUILTIN_SLUG:
            row = await ensure_builtin(conn, org_id)
    elif agent_id is not None:
        row = await store.get_visible(conn, agent_id, user_id)
    else:
        row = await ensure_builtin(conn, org_id)
    if row is None:
        raise _not_found()
    agent = await _published(conn, row, version)
    if not with_delegates:
        return agent
    delegates = [found for d in agent.config.delegates if (found := await store.by_slug(conn, d, user_id))]
    return dataclasses.replace(agent, delegates=tuple([await _published(conn, d) for d in delegates]))


async def _published(conn: Conn, row: AgentRow, number: int | None = None) -> LaunchAgent:
    """The agent at its published version (or at `number`: a draft being tried)."""
    found = await version_row(conn, row.id, number or row.published_version)
    return LaunchAgent(row.id, row.slug, found.version, AgentConfig.model_validate(found.config))


async def resolve_slug(principal: Principal, slug: str) -> LaunchAgent:
    """The agent the caller names by slug (a chat's binding, a workflow's agent): 404 when they cannot see it."""
    async with org_transaction(principal.org_id) as conn:
        return await for_launch(conn, principal.org_id, principal.user_id, slug=slug)


async def list_for_user(org_id: UUID, user_id: UUID) -> list[tuple[AgentRow, dict[str, Any]]]:
    """The agents a user sees (for `/mcp` `list_agents`)."""
    async with org_transaction(org_id) as conn:
        await ensure_builtin(conn, org_id)
        return await store.list_visible(conn, user_id)
