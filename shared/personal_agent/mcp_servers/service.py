"""MCP servers of an org: register (headers sealed, write-only), read, change, remove, discover their tools
(cached on the row with a TTL), list the tools a caller may pick, and snapshot picked tools at launch."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.errors import Conflict, InvalidInput, NotFound
from personal_agent.governance.keys import seal
from personal_agent.mcp_servers import endpoint, store
from personal_agent.mcp_servers.client import HASH_VERSION, discover, key_context
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import McpServerRef, ToolRef

DISCOVERY_TTL = timedelta(minutes=5)
"""How long a discovery is reused for `GET /api/v1/tools` and launches (the admin's tools route can refresh)."""
SEPARATOR = "_"
"""A server's tool `lookup` on server `crm` is offered as `crm_lookup` (server names have no `_`)."""


def public(row: dict[str, Any]) -> dict[str, Any]:
    """A server as the API shows it: header names only, never their values."""
    out = {k: v for k, v in row.items() if k not in ("discovered", "discovered_at")}
    out["has_headers"] = bool(row["header_names"])
    return out


def check_transport(transport: str) -> None:
    """stdio servers are local commands: refused (422 `stdio_local_only`) outside local mode."""
    if transport == "stdio" and not get_settings().is_local:
        raise InvalidInput("stdio MCP servers run only in local mode", code="stdio_local_only")


async def check_endpoint(url: str, transport: str) -> None:
    """A URL the address checks refuse (422 `mcp_url_refused`), a stdio command the operator did not configure
    (422 `mcp_stdio_not_allowed`) or stdio outside local mode (422 `stdio_local_only`) is not saved."""
    try:
        await endpoint.check_endpoint(url, transport)
    except endpoint.EndpointRefused as exc:
        raise InvalidInput(str(exc), code=exc.code) from None


async def _seal_headers(org_id: UUID, server_id: UUID, server_origin: str, headers: dict[str, str]) -> Any:
    return await asyncio.to_thread(seal, org_id, key_context(server_id), json.dumps(headers), server_origin)


async def create(org_id: UUID, values: dict[str, Any]) -> dict[str, Any]:
    check_transport(values["transport"])
    await check_endpoint(values["url"], values["transport"])
    headers: dict[str, str] = values.pop("headers") or {}
    server_id = uuid.uuid4()
    values["headers_origin"] = endpoint.origin(values["url"], values["transport"])
    sealed = await _seal_headers(org_id, server_id, values["headers_origin"], headers) if headers else None
    values["header_names"] = sorted(headers)
    from psycopg.errors import UniqueViolation

    try:
        async with org_transaction(org_id) as conn:
            row = await store.insert(conn, org_id, server_id, values, sealed)
    except UniqueViolation as exc:
        raise Conflict(f"an MCP server named {values['name']!r} exists", code="mcp_server_exists") from exc
    return public(row)


async def list_servers(org_id: UUID) -> list[dict[str, Any]]:
    async with org_transaction(org_id) as conn:
        return [public(r) for r in await store.list_servers(conn)]


async def _row(org_id: UUID, server_id: UUID) -> dict[str, Any]:
    async with org_transaction(org_id) as conn:
        row = await store.get(conn, server_id)
    if row is None:
        raise NotFound("MCP server not found", code="mcp_server_not_found")
    return row


async def get(org_id: UUID, server_id: UUID) -> dict[str, Any]:
    return public(await _row(org_id, server_id))


async def update(org_id: UUID, server_id: UUID, values: dict[str, Any]) -> dict[str, Any]:
    """Change the given fields; `headers` replaces every header (`{}` removes them). Headers entered for one
    origin never go to another: a URL on another origin drops them unless the same change brings new ones."""
    headers = values.pop("headers", None)
    row = await _row(org_id, server_id)
    url = values.get("url", row["url"])
    if "url" in values:
        await check_endpoint(url, row["transport"])
    values["headers_origin"] = endpoint.origin(url, row["transport"])
    sealed: Any = None
    if headers is not None:
        sealed = await _seal_headers(org_id, server_id, values["headers_origin"], headers) if headers else False
        values["header_names"] = sorted(headers)
    elif row["header_names"] and values["headers_origin"] != endpoint.origin(row["url"], row["transport"]):
        sealed, values["header_names"] = False, []
    from psycopg.errors import UniqueViolation

    try:
        async with org_transaction(org_id) as conn:
            updated = await store.update(conn, server_id, values, sealed, expected_url=row["url"])
    except UniqueViolation as exc:
        raise Conflict("an MCP server with that name exists", code="mcp_server_exists") from exc
    if updated is None:  # removed, or its URL changed under this change: the headers were sealed for that one
        await _row(org_id, server_id)
        raise Conflict("the MCP server changed meanwhile; try again", code="mcp_server_changed")
    return public(updated)


async def delete(org_id: UUID, server_id: UUID) -> None:
    async with org_transaction(org_id) as conn:
        if not await store.delete(conn, server_id):
            raise NotFound("MCP server not found", code="mcp_server_not_found")


def _current(discovery: dict[str, Any] | None) -> dict[str, Any]:
    """A cached discovery whose hashes are of the current kind (older ones are as good as none)."""
    return discovery if discovery is not None and discovery.get("hash_version") == HASH_VERSION else {}


def _fresh(row: dict[str, Any]) -> bool:
    at = row["discovered_at"]
    return bool(_current(row["discovered"])) and at is not None and datetime.now(UTC) - at < DISCOVERY_TTL


async def _discover_row(org_id: UUID, row: dict[str, Any], *, refresh: bool) -> dict[str, Any]:
    """The row's discovery: cached while fresh, else asked of the server now (and cached)."""
    if not refresh and _fresh(row):
        return dict(row["discovered"])

    found = await discover(org_id, row["id"], row["url"], row["transport"])
    before = _current(row["discovered"])
    last_known = before.get("tools") or before.get("last_known_tools")
    if not found["reachable"] and last_known:
        # Down now: launches keep the last known tool list (the engine step reports the server unreachable).
        found = {**found, "last_known_tools": last_known}
    async with org_transaction(org_id) as conn:
        await store.save_discovery(conn, row["id"], found)
    return found


def _offered(row: dict[str, Any], tool: dict[str, Any]) -> dict[str, Any] | None:
    """A discovered tool as the org offers it (None: not on the server's allow-list)."""
    allowed = row["allowed_tools"]
    if allowed is not None and tool["name"] not in allowed:
        return None
    policy = (row["tool_policies"] or {}).get(tool["name"], {})
    return {
        "name": f"{row['name']}{SEPARATOR}{tool['name']}",
        "remote_name": tool["name"],
        "description": tool["description"],
        "server_id": row["id"],
        "server": row["name"],
        "trust_tier": row["trust_tier"],
        "acts": bool(policy.get("acts", False)),
        "approval": policy.get("approval", "gate"),
        "schema_hash": tool["schema_hash"],
    }


async def server_tools(org_id: UUID, server_id: UUID, *, refresh: bool = True) -> dict[str, Any]:
    """Discover a server's tools (admin): reachability, and its tools as offered (allow-list, policies)."""
    row = await _row(org_id, server_id)
    found = await _discover_row(org_id, row, refresh=refresh)
    tools = [t for tool in found.get("tools", []) if (t := _offered(row, tool)) is not None]
    return {"server_id": row["id"], "reachable": found["reachable"], "error": found.get("error"), "tools": tools}


async def org_tools(org_id: UUID) -> list[dict[str, Any]]:
    """The MCP tools of the org's enabled servers (servers that are down and never answered offer none)."""
    async with org_transaction(org_id) as conn:
        rows = await store.list_servers(conn, enabled_only=True)
    found = await asyncio.gather(*(_discover_row(org_id, row, refresh=False) for row in rows))
    out = []
    for row, discovery in zip(rows, found, strict=True):
        listed = discovery.get("tools") or discovery.get("last_known_tools") or []
        out += [t for tool in listed if (t := _offered(row, tool)) is not None]
    return out


async def snapshot(org_id: UUID, names: tuple[str, ...]) -> tuple[tuple[ToolRef, ...], tuple[McpServerRef, ...]]:
    """The named MCP tools as ToolRefs (server, schema hash, tier, policy) and the servers they need."""
    if not names:
        return (), ()
    wanted = {n.split(SEPARATOR, 1)[0] for n in names}
    async with org_transaction(org_id) as conn:
        rows = [r for r in await store.list_servers(conn, enabled_only=True) if r["name"] in wanted]
    found = await asyncio.gather(*(_discover_row(org_id, row, refresh=False) for row in rows))
    offered: dict[str, dict[str, Any]] = {}
    for row, discovery in zip(rows, found, strict=True):
        for tool in discovery.get("tools") or discovery.get("last_known_tools") or []:
            if (t := _offered(row, tool)) is not None:
                offered[t["name"]] = t
    refs = []
    for name in names:
        tool = offered.get(name)
        if tool is None:
            raise InvalidInput(f"unknown tool {name!r}", code="unknown_tool")
        refs.append(
            ToolRef(
                name=name,
                requires_approval=tool["approval"] == "always",
                acts=tool["acts"],
                untrusted=tool["trust_tier"] == 0,
                server_id=tool["server_id"],
                remote_name=tool["remote_name"],
                schema_hash=tool["schema_hash"],
                trust_tier=tool["trust_tier"],
                approval=tool["approval"],
            )
        )
    used = {ref.server_id for ref in refs}
    servers = tuple(
        McpServerRef(id=r["id"], name=r["name"], url=r["url"], transport=r["transport"], trust_tier=r["trust_tier"])
        for r in rows
        if r["id"] in used
    )
    return tuple(refs), servers
