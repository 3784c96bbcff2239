"""The SQL of `provider_keys`: an org's BYOK keys, sealed. Every call runs inside the caller's org transaction
(RLS); the sealed columns are read only to build a model or to bind a key to its endpoint."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn

PUBLIC_COLUMNS = "id, provider, label, key_hint, created_at"


async def insert(
    conn: Conn,
    org_id: UUID,
    user_id: UUID,
    provider: str,
    label: str,
    sealed: tuple[bytes, bytes, bytes],
    key_hint: str,
) -> dict[str, Any]:
    ciphertext, nonce, encrypted_data_key = sealed
    cur = await conn.execute(
        "INSERT INTO provider_keys (org_id, provider, label, ciphertext, nonce, encrypted_data_key, key_hint,"
        f" created_by) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING {PUBLIC_COLUMNS}",
        [org_id, provider, label, ciphertext, nonce, encrypted_data_key, key_hint, user_id],
    )
    row = await cur.fetchone()
    assert row is not None
    return row


async def list_public(conn: Conn) -> list[dict[str, Any]]:
    cur = await conn.execute(f"SELECT {PUBLIC_COLUMNS} FROM provider_keys ORDER BY created_at DESC")
    return list(await cur.fetchall())


async def delete(conn: Conn, key_id: UUID) -> bool:
    cur = await conn.execute("DELETE FROM provider_keys WHERE id = %s RETURNING id", [key_id])
    return await cur.fetchone() is not None


async def disable_providers_of(conn: Conn, key_id: UUID) -> None:
    """A deleted key's providers stop offering models (inside the deleting transaction)."""
    await conn.execute("UPDATE providers SET enabled = false WHERE key_id = %s", [key_id])


async def sealed_row(conn: Conn, key_id: UUID) -> dict[str, Any] | None:
    """The key's label, bound endpoint and sealed parts (None: no such key in this org)."""
    cur = await conn.execute(
        "SELECT provider, endpoint, ciphertext, nonce, encrypted_data_key FROM provider_keys WHERE id = %s", [key_id]
    )
    return await cur.fetchone()


async def attached_providers(conn: Conn, key_id: UUID) -> list[dict[str, Any]]:
    """The kind and base_url of every provider that uses the key."""
    cur = await conn.execute("SELECT kind, base_url FROM providers WHERE key_id = %s", [key_id])
    return list(await cur.fetchall())


async def bind(conn: Conn, key_id: UUID, endpoint: str, encrypted_data_key: bytes) -> bool:
    """Record the key's endpoint with its data key rewrapped for it, if nobody bound it first."""
    cur = await conn.execute(
        "UPDATE provider_keys SET endpoint = %s, encrypted_data_key = %s WHERE id = %s AND endpoint IS NULL"
        " RETURNING id",
        [endpoint, encrypted_data_key, key_id],
    )
    return await cur.fetchone() is not None
