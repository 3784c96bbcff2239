"""Workflow rows and their credentials. Every call runs inside an org transaction (RLS), except
`workflow_org`, which maps a webhook's workflow id to its org through one SECURITY DEFINER function.

A read returns a typed row, a frozen dataclass (`Workflow`, `Credential`), never a dict: the store stays free of
the API's pydantic models, and the API builds its views from the row's attributes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from personal_agent.db import system_transaction
from personal_agent.db.pool import Conn
from personal_agent.workflows.credentials import Sealed

COLUMNS = (
    "id, org_id, owner_id, chat_id, name, instructions, prompt_template, model, tools, approval_policy,"
    " approval_timeout_seconds, rate_limit_per_minute, webhook_enabled, recall_memories, created_at, updated_at, agent"
)
CredentialKind = Literal["signing_secret", "bearer_token"]


@dataclass(frozen=True)
class Workflow:
    """A workflow row: what a trigger needs to start one of its runs, and what its owner sees of it."""

    id: UUID
    org_id: UUID
    owner_id: UUID
    chat_id: UUID | None
    name: str
    instructions: str | None
    prompt_template: str
    model: str | None
    tools: tuple[str, ...] | None
    approval_policy: Literal["wait", "deny"]
    approval_timeout_seconds: int
    rate_limit_per_minute: int
    webhook_enabled: bool
    recall_memories: bool
    """Its runs recall the owner's memories (opted in by the owner; off by default)."""
    created_at: datetime
    updated_at: datetime
    agent: str | None
    """The slug of the agent its runs use (None: the built-in assistant); its own fields override the agent's."""


def _workflow(row: dict[str, Any]) -> Workflow:
    tools = row["tools"]
    return Workflow(**{**row, "tools": tuple(tools) if tools is not None else None})


@dataclass(frozen=True)
class Credential:
    id: UUID
    kind: CredentialKind
    sealed: Sealed | None
    token_hash: str | None
    expires_at: datetime | None


async def workflow_org(workflow_id: UUID) -> UUID | None:
    """The org of a workflow named by a webhook URL (before any org is known), or None."""
    async with system_transaction() as conn:
        cur = await conn.execute("SELECT pa_workflow_org(%s) AS org_id", [workflow_id])
        row = await cur.fetchone()
    return row["org_id"] if row else None


async def get_row(conn: Conn, workflow_id: UUID, *, for_update: bool = False) -> Workflow | None:
    lock = " FOR UPDATE" if for_update else ""
    cur = await conn.execute(f"SELECT {COLUMNS} FROM workflows WHERE id = %s{lock}", [workflow_id])
    row = await cur.fetchone()
    return _workflow(row) if row is not None else None


async def list_rows(conn: Conn, owner_id: UUID | None, limit: int) -> list[Workflow]:
    """The org's workflows (only `owner_id`'s unless None), newest first."""
    mine = "" if owner_id is None else " WHERE owner_id = %s"
    cur = await conn.execute(
        f"SELECT {COLUMNS} FROM workflows{mine} ORDER BY created_at DESC, id DESC LIMIT %s",
        [*([] if owner_id is None else [owner_id]), limit],
    )
    return [_workflow(row) for row in await cur.fetchall()]


async def live_credentials(conn: Conn, workflow_id: UUID, kind: CredentialKind) -> list[Credential]:
    """The credentials a request may use now: the current one and any rotated out less than its grace ago."""
    cur = await conn.execute(
        "SELECT id, kind, ciphertext, nonce, encrypted_data_key, token_hash, expires_at FROM workflow_credentials"
        " WHERE workflow_id = %s AND kind = %s AND (expires_at IS NULL OR expires_at > now())"
        " ORDER BY expires_at IS NOT NULL, created_at DESC",
        [workflow_id, kind],
    )
    return [
        Credential(
            row["id"],
            row["kind"],
            Sealed(bytes(row["ciphertext"]), bytes(row["nonce"]), _bytes(row["encrypted_data_key"]))
            if row["ciphertext"] is not None
            else None,
            row["token_hash"],
            row["expires_at"],
        )
        for row in await cur.fetchall()
    ]


def _bytes(value: Any) -> bytes | None:
    return bytes(value) if value is not None else None


async def add_signing_secret(conn: Conn, org_id: UUID, workflow_id: UUID, sealed: Sealed, hint: str) -> None:
    await conn.execute(
        "INSERT INTO workflow_credentials (org_id, workflow_id, kind, ciphertext, nonce, encrypted_data_key, hint)"
        " VALUES (%s, %s, 'signing_secret', %s, %s, %s, %s)",
        [org_id, workflow_id, sealed.ciphertext, sealed.nonce, sealed.encrypted_data_key, hint],
    )


async def add_bearer_token(conn: Conn, org_id: UUID, workflow_id: UUID, token_hash: str, hint: str) -> None:
    await conn.execute(
        "INSERT INTO workflow_credentials (org_id, workflow_id, kind, token_hash, hint) VALUES (%s, %s, 'bearer_token',"
        " %s, %s)",
        [org_id, workflow_id, token_hash, hint],
    )


async def retire_credentials(conn: Conn, workflow_id: UUID, kind: CredentialKind, grace_seconds: int) -> None:
    """Rotate out the current credentials of `kind`: still accepted for `grace_seconds`, then gone."""
    if grace_seconds <= 0:
        await conn.execute("DELETE FROM workflow_credentials WHERE workflow_id = %s AND kind = %s", [workflow_id, kind])
        return
    await conn.execute(
        "UPDATE workflow_credentials SET expires_at = least(coalesce(expires_at, 'infinity'),"
        " now() + make_interval(secs => %s)) WHERE workflow_id = %s AND kind = %s",
        [grace_seconds, workflow_id, kind],
    )
    await conn.execute(
        "DELETE FROM workflow_credentials WHERE workflow_id = %s AND kind = %s AND expires_at <= now()",
        [workflow_id, kind],
    )


async def credential_hints(conn: Conn, workflow_id: UUID) -> dict[str, str]:
    """The display hint of each current (not rotated-out) credential kind."""
    cur = await conn.execute(
        "SELECT kind, hint FROM workflow_credentials WHERE workflow_id = %s AND expires_at IS NULL", [workflow_id]
    )
    return {row["kind"]: row["hint"] for row in await cur.fetchall()}


async def insert_workflow(conn: Conn, columns: dict[str, Any]) -> None:
    """Store a new workflow from its column values (the caller's names, never the user's)."""
    names = ", ".join(columns)
    await conn.execute(
        f"INSERT INTO workflows ({names}) VALUES ({', '.join(['%s'] * len(columns))})", [*columns.values()]
    )


async def update_workflow(conn: Conn, workflow_id: UUID, sets: dict[str, Any]) -> None:
    """Set the given columns (the caller's names, never the user's) and `updated_at`."""
    assignments = ", ".join(f"{k} = %s" for k in sets)
    await conn.execute(
        f"UPDATE workflows SET {assignments}, updated_at = now() WHERE id = %s", [*sets.values(), workflow_id]
    )


async def delete_workflow(conn: Conn, workflow_id: UUID) -> None:
    await conn.execute("DELETE FROM workflows WHERE id = %s", [workflow_id])


async def set_chat(conn: Conn, workflow_id: UUID, chat_id: UUID) -> None:
    """The chat the workflow's runs go to (a new one when the old chat was deleted)."""
    await conn.execute("UPDATE workflows SET chat_id = %s WHERE id = %s", [chat_id, workflow_id])
