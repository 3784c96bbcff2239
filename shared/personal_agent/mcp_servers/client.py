"""The MCP client side: connect to a registered server (its URL checked and pinned before every connection, its
sealed headers unsealed only here, for the one connection and only for the origin they were entered for), list
its tools with their definition hashes. The `mcp` SDK is imported inside the functions: the API function loads it
only when an admin discovers a server's tools."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.governance.keys import Envelope, unseal
from personal_agent.mcp_servers import store
from personal_agent.mcp_servers.endpoint import EndpointRefused, check_stdio, check_url, origin

if TYPE_CHECKING:
    from mcp.client import Client

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_SECONDS = 10.0
CALL_TIMEOUT_SECONDS = 60.0
MAX_TOOLS_PER_SERVER = 128
"""A server listing more offers its first 128 (a listing that size is a server to look at, not to offer)."""
MAX_DESCRIPTION_CHARS = 1024
"""A tool's description is cut here before any model sees it (the hash covers all of it)."""
MAX_SCHEMA_CHARS = 16_384
"""A tool whose input schema is longer as JSON is not offered."""
HASH_VERSION = 2
"""Discoveries hash name, description and schema together since version 2; older ones are asked again."""
UNREACHABLE = "mcp_server_unreachable"
"""Why a server could not be used, whatever failed: one code, so an error never tells a closed port, a port that
speaks no HTTP and one that speaks HTTP but no MCP apart (an org admin must not probe the network with it)."""
SERVER_CHANGED = "mcp_server_changed"
HEADERS_REFUSED = "mcp_headers_refused"


def key_context(server_id: UUID) -> str:
    """Whose sealed headers these are (with the org, the KMS encryption context and the AES-GCM associated data);
    the origin they were entered for is the context's `endpoint` (`governance.keys`), so they open for no other."""
    return f"mcp-server:{server_id}"


def definition_hash(name: str, description: str, input_schema: dict[str, Any]) -> str:
    """sha256 of a tool's name, description and input schema as canonical JSON: what a model is shown of it."""
    definition = {"name": name, "description": description, "input_schema": input_schema}
    return hashlib.sha256(json.dumps(definition, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


async def load_headers(org_id: UUID, server_id: UUID, expected_url: str, transport: str = "http") -> dict[str, str]:
    """The server's auth headers in plain text, for one connection to `expected_url`. Raises `EndpointRefused` when
    the server's URL is no longer that one (removed, or changed since the run's launch) or its headers were sealed
    for another origin. Never log, emit or return the headers."""
    async with org_transaction(org_id) as conn:
        row = await store.connection(conn, server_id)
    if row is None or row["url"] != expected_url or row["transport"] != transport:
        raise EndpointRefused("the MCP server was changed or removed since this run started", SERVER_CHANGED)
    if row["ciphertext"] is None or transport != "http":
        return {}
    now = origin(expected_url)
    if row["headers_origin"] is not None and row["headers_origin"] != now:
        raise EndpointRefused("the server's auth headers were entered for another origin", HEADERS_REFUSED)
    bound = now if row["headers_origin"] else None  # sealed before migration 0026: bound to the server only
    envelope = Envelope(bytes(row["ciphertext"]), bytes(row["nonce"]), bytes(row["encrypted_data_key"]))
    try:
        plain = await asyncio.to_thread(unseal, org_id, key_context(server_id), envelope, bound)
    except Exception:  # bound to another server or origin: the AES-GCM tag (or KMS) refuses
        raise EndpointRefused("the server's auth headers do not open for its URL", HEADERS_REFUSED) from None
    headers: dict[str, str] = json.loads(plain)
    return headers


@asynccontextmanager
async def connect(
    url: str, headers: dict[str, str], transport: str = "http", timeout: float = CALL_TIMEOUT_SECONDS
) -> AsyncIterator[Client]:
    """An initialized MCP session over streamable HTTP to the URL's checked address (no redirects), or, in local
    mode, over stdio to one of the operator's commands. Raises `EndpointRefused` for a URL or command it may not
    reach."""
    import httpx2
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client

    from personal_agent.mcp_servers.pinned_http import PinnedTransport

    if transport == "stdio":
        import shlex

        from mcp import StdioServerParameters

        check_stdio(url)
        command, *args = shlex.split(url)
        async with Client(StdioServerParameters(command=command, args=args), read_timeout_seconds=timeout) as client:
            yield client
        return
    checked = await check_url(url)
    limits = httpx2.Timeout(CONNECT_TIMEOUT_SECONDS, read=timeout)
    pinned = PinnedTransport(checked)
    async with httpx2.AsyncClient(
        headers=headers, timeout=limits, follow_redirects=False, max_redirects=0, trust_env=False, transport=pinned
    ) as http:
        streams = streamable_http_client(str(checked.url), http_client=http)
        async with Client(streams, read_timeout_seconds=timeout) as client:
            yield client


def tool_entry(tool: Any) -> dict[str, Any] | None:
    """One discovered tool as stored in the discovery cache (its description cut to `MAX_DESCRIPTION_CHARS`), or
    None for a tool whose input schema is too large to offer."""
    schema = dict(tool.input_schema or {"type": "object"})
    if len(json.dumps(schema, separators=(",", ":"))) > MAX_SCHEMA_CHARS:
        return None
    description = tool.description or ""
    return {
        "name": tool.name,
        "description": description[:MAX_DESCRIPTION_CHARS],
        "input_schema": schema,
        "schema_hash": definition_hash(tool.name, description, schema),
    }


def tool_entries(tools: list[Any]) -> dict[str, dict[str, Any]]:
    """The entries of a server's listing by name: at most `MAX_TOOLS_PER_SERVER`, without oversized ones."""
    entries: dict[str, dict[str, Any]] = {}
    for tool in tools:
        if len(entries) == MAX_TOOLS_PER_SERVER:
            log.warning("an MCP server lists more than %d tools; the rest are not offered", MAX_TOOLS_PER_SERVER)
            break
        if (entry := tool_entry(tool)) is not None:
            entries[tool.name] = entry
    return entries


async def discover(org_id: UUID, server_id: UUID, url: str, transport: str = "http") -> dict[str, Any]:
    """The server's tools now: `{"reachable": true, "tools": [...]}`, or `{"reachable": false, "error": CODE}`."""
    try:
        headers = await load_headers(org_id, server_id, url, transport)
        async with connect(url, headers, transport, timeout=CONNECT_TIMEOUT_SECONDS) as client:
            listed = await client.list_tools()
    except Exception as exc:  # a server that is down, refuses us or speaks no MCP: reported, never fatal
        return {"reachable": False, "error": describe_failure(exc), "hash_version": HASH_VERSION}
    tools = list(tool_entries(list(listed.tools)).values())
    return {"reachable": True, "tools": tools, "hash_version": HASH_VERSION}


def describe_failure(exc: BaseException) -> str:
    """The stable code of why a server could not be used: a refusal's own code, else `UNREACHABLE` (the kind of
    failure goes to the operator's log only, never the request's URL or headers)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, EndpointRefused):
        return exc.code
    log.info("an MCP server could not be used: %s", type(exc).__name__)
    return UNREACHABLE
