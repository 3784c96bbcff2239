"""Who may do what with a workflow. Its runs act as its owner (the owner's chat, tools, budget and, when opted
in, memories), so only the owner changes it, starts it by hand or routes its outputs; an org admin may read it
(and delete it: stopping a workflow acts as nobody). Anyone else gets the same 404 as for a workflow of another
org, so a refusal tells nothing about what exists."""

from __future__ import annotations

from uuid import UUID

from personal_agent.db.pool import Conn
from personal_agent.errors import NotFound
from personal_agent.identity.principal import Principal
from personal_agent.workflows import store


def not_found() -> NotFound:
    return NotFound("workflow not found", code="workflow_not_found")


def may_read(principal: Principal, row: store.Workflow) -> bool:
    return row.owner_id == principal.user_id or principal.is_org_admin


async def readable_row(conn: Conn, principal: Principal, workflow_id: UUID) -> store.Workflow:
    """The workflow for reading (its owner or an org admin); 404 otherwise."""
    row = await store.get_row(conn, workflow_id)
    if row is None or not may_read(principal, row):
        raise not_found()
    return row


async def owned_row(conn: Conn, principal: Principal, workflow_id: UUID, *, for_update: bool = False) -> store.Workflow:
    """The caller's own workflow; 404 for anyone else's, an org admin's included."""
    row = await store.get_row(conn, workflow_id, for_update=for_update)
    if row is None or row.owner_id != principal.user_id:
        raise not_found()
    return row
