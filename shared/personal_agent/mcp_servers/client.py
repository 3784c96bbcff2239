"""The MCP client side: connect to a registered server (its sealed headers unsealed only here, for the one
connection), list its tools with their schema hashes. The `mcp` SDK is imported inside the functions: the API
function loads it only when an admin discovers a server's tools."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.governance.keys import Envelope, unseal
from personal_agent.mcp_servers import store

if TYPE_CHECKING:
    from mcp.client import Client

CONNECT_TIMEOUT_SECONDS = 10.0
CALL_TIMEOUT_SECONDS = 60.0


def key_context(server_id: UUID) -> str:
    """What a server's sealed headers are bound to (the KMS encryption context and the AES-GCM associated data)."""
    return f"mcp-server:{server_id}"


def schema_hash(input_schema: dict[str, Any]) -> str:
    """sha256 of a tool's input schema as canonical JSON."""
    return hashlib.sha256(json.dumps(input_schema, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


async def load_headers(org_id: UUID, server_id: UUID) -> dict[str, str]:
    """The server's auth headers in plain text, for one connection. Never log, emit or return them."""
    async with org_transaction(org_id) as conn:
        sealed = await store.sealed_headers(conn, server_id)
    if sealed is None:
        return {}
    plain = await asyncio.to_thread(unseal, org_id, key_context(server_id), Envelope(*sealed))
    headers: dict[str, str] = json.loads(plain)
    return headers


@asynccontextmanager
async def connect(
    url: str, headers: dict[str, str], transport: str = "http", timeout: float = CALL_TIMEOUT_SECONDS
) -> AsyncIterator[Client]:
    """An initialized MCP session over streamable HTTP (or, in local mode, a stdio command line as `url`)."""
    import httpx2
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client

    if transport == "stdio":
        import shlex

        from mcp import StdioServerParameters

        command, *args = shlex.split(url)
        async with Client(StdioServerParameters(command=command, args=args), read_timeout_seconds=timeout) as client:
            yield client
        return
    limits = httpx2.Timeout(CONNECT_TIMEOUT_SECONDS, read=timeout)
    async with httpx2.AsyncClient(headers=headers, timeout=limits, follow_redirects=False) as http:
        streams = streamable_http_client(url, http_client=http)
        async with Client(streams, read_timeout_seconds=timeout) as client:
            yield client


def tool_entry(tool: Any) -> dict[str, Any]:
    """One discovered tool as stored in the discovery cache."""
    schema = dict(tool.input_schema or {"type": "object"})
    return {
        "name": tool.name,
        "description": tool.description or "",
        "input_schema": schema,
        "schema_hash": schema_hash(schema),
    }


async def discover(org_id: UUID, server_id: UUID, url: str, transport: str = "http") -> dict[str, Any]:
    """The server's tools now: `{"reachable": true, "tools": [...]}`, or `{"reachable": false, "error": ...}`."""
    try:
        headers = await load_headers(org_id, server_id)
        async with connect(url, headers, transport, timeout=CONNECT_TIMEOUT_SECONDS) as client:
            listed = await client.list_tools()
    except Exception as exc:  # a server that is down, refuses us or speaks no MCP: reported, never fatal
        return {"reachable": False, "error": describe_failure(exc)}
    return {"reachable": True, "tools": [tool_entry(t) for t in listed.tools]}


def describe_failure(exc: BaseException) -> str:
    """A short reason a server could not be used, without anything the request carried (headers, URL query)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    name = type(exc).__name__
    if "Connect" in name or isinstance(exc, OSError):
        return f"{name}: the server did not accept a connection"
    if "Timeout" in name:
        return f"{name}: the server did not answer in time"
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if status is not None:
        return f"{name}: HTTP {status}"
    return name
