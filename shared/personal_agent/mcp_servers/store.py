"""The SQL of `mcp_servers`. The sealed headers are read only by `connection` (for the step that connects)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn, jsonb

PUBLIC_COLUMNS = (
    "id, name, url, transport, trust_tier, header_names, allowed_tools, tool_policies, enabled, discovered,"
    " discovered_at, created_at"
)


async def insert(conn: Conn, org_id: UUID, server_id: UUID, values: dict[str, Any], sealed: Any) -> dict[str, Any]:
    cur = await conn.execute(
        "INSERT INTO mcp_servers (id, org_id, name, url, transport, trust_tier, ciphertext, nonce, encrypted_data_key,"
        " headers_origin, header_names, allowed_tools, tool_policies, enabled) VALUES (%s, %s, %s, %s, %s, %s, %s, %s,"
        f" %s, %s, %s, %s, %s, %s) RETURNING {PUBLIC_COLUMNS}",
        [
            server_id,
            org_id,
            values["name"],
            values["url"],
            values["transport"],
            values["trust_tier"],
            sealed.ciphertext if sealed else None,
            sealed.nonce if sealed else None,
            sealed.encrypted_data_key if sealed else None,
            values["headers_origin"] if sealed else None,
            values["header_names"],
            values["allowed_tools"],
            jsonb(values["tool_policies"]),
            values["enabled"],
        ],
    )
    row = await cur.fetchone()
    assert row is not None
    return row


async def list_servers(conn: Conn, *, enabled_only: bool = False) -> list[dict[str, Any]]:
    where = " WHERE enabled" if enabled_only else ""
    cur = await conn.execute(f"SELECT {PUBLIC_COLUMNS} FROM mcp_servers{where} ORDER BY name")
    return await cur.fetchall()


async def get(conn: Conn, server_id: UUID) -> dict[str, Any] | None:
    cur = await conn.execute(f"SELECT {PUBLIC_COLUMNS} FROM mcp_servers WHERE id = %s", [server_id])
    return await cur.fetchone()


async def update(
    conn: Conn, server_id: UUID, values: dict[str, Any], sealed: Any | None, *, expected_url: str
) -> dict[str, Any] | None:
    """Set the given columns of the server, if its URL is still `expected_url`; `sealed` (an envelope bound to
    `values["headers_origin"]`, or False to clear) replaces the headers when not None."""
    sets, params = [], []
    for column in ("name", "url", "trust_tier", "allowed_tools", "enabled", "header_names"):
        if column in values:
            sets.append(f"{column} = %s")
            params.append(values[column])
    if "tool_policies" in values:
        sets.append("tool_policies = %s")
        params.append(jsonb(values["tool_policies"]))
    if sealed is not None:
        sets.append("ciphertext = %s, nonce = %s, encrypted_data_key = %s, headers_origin = %s")
        envelope = [sealed.ciphertext, sealed.nonce, sealed.encrypted_data_key] if sealed else [None, None, None]
        params += [*envelope, values["headers_origin"] if sealed else None]
    if "url" in values or sealed is not None:
        sets.append("discovered = NULL, discovered_at = NULL")  # another server now: the cache is not its
    if not sets:
        return await get(conn, server_id)
    cur = await conn.execute(
        f"UPDATE mcp_servers SET {', '.join(sets)} WHERE id = %s AND url = %s RETURNING {PUBLIC_COLUMNS}",
        [*params, server_id, expected_url],
    )
    return await cur.fetchone()


async def delete(conn: Conn, server_id: UUID) -> bool:
    cur = await conn.execute("DELETE FROM mcp_servers WHERE id = %s RETURNING id", [server_id])
    return await cur.fetchone() is not None


async def save_discovery(conn: Conn, server_id: UUID, discovered: dict[str, Any]) -> None:
    await conn.execute(
        "UPDATE mcp_servers SET discovered = %s, discovered_at = now() WHERE id = %s", [jsonb(discovered), server_id]
    )


async def connection(conn: Conn, server_id: UUID) -> dict[str, Any] | None:
    """What connecting to the server needs now: its URL and transport, and its sealed auth headers (`ciphertext`,
    `nonce`, `encrypted_data_key`, all None without any) with the origin they were sealed for."""
    cur = await conn.execute(
        "SELECT url, transport, ciphertext, nonce, encrypted_data_key, headers_origin FROM mcp_servers WHERE id = %s",
        [server_id],
    )
    return await cur.fetchone()
