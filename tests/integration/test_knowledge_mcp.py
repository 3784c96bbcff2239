"""The platform MCP server's `search_knowledge`: an MCP client with a personal access token gets passages with
citations from its org's knowledge base, and nothing of another org's."""

from __future__ import annotations

from typing import Any

import httpx

from tests.auth import auth_headers, bearer
from tests.knowledge import make_pdf, upload_and_wait
from tests.platform_mcp import mcp_session, personal_token


async def test_an_mcp_client_searches_its_orgs_knowledge(
    live_url: str, http: httpx.AsyncClient, make_tenant: Any
) -> None:
    a, b = make_tenant(), make_tenant()
    text = "The office wifi network is called Meadow and its password rotates monthly."
    doc = await upload_and_wait(http, auth_headers(a), a, "office.pdf", "application/pdf", make_pdf([text]))
    async with mcp_session(live_url, bearer(await personal_token(http, a))) as session:
        found = await session.call_tool("search_knowledge", {"query": "wifi network name", "k": 3})
    assert not found.is_error, found.content
    assert found.structured_content is not None
    passage = found.structured_content["passages"][0]
    assert (passage["document_id"], passage["page"]) == (doc["id"], 1) and "Meadow" in passage["text"]
    assert passage["citation"].startswith("office.pdf, p. 1") and passage["chunk_id"] in passage["citation"]
    async with mcp_session(live_url, bearer(await personal_token(http, b))) as session:
        other = await session.call_tool("search_knowledge", {"query": "wifi network name"})
    assert other.structured_content == {"passages": []}
