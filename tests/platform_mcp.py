"""A client of the platform as an MCP server (`/mcp`): a personal access token made through the API and the
official `mcp` client's session over streamable HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.auth import auth_headers


async def personal_token(http: httpx.AsyncClient, tenant: Any) -> str:
    """A new personal access token of `tenant`'s user, made through the API."""
    created = await http.post("/api/v1/me/tokens", json={"name": "mcp"}, headers=auth_headers(tenant))
    assert created.status_code == 201, created.text
    return str(created.json()["token"])


@asynccontextmanager
async def mcp_session(
    live_url: str, headers: dict[str, str], statuses: list[int] | None = None
) -> AsyncIterator[ClientSession]:
    """An initialised MCP client session on the platform's `/mcp`, recording every answer's status."""

    async def record(response: httpx2.Response) -> None:
        if statuses is not None:
            statuses.append(response.status_code)

    async with (
        httpx2.AsyncClient(headers=headers, timeout=30, event_hooks={"response": [record]}) as client,
        streamable_http_client(f"{live_url}/mcp", http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session
