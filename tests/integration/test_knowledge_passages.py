"""A citation's source passage: `GET /api/v1/knowledge/chunks/{id}` gives the passage a search or the agent's
`search_knowledge` cited, with its document and section, to whoever may search it; another org's caller and a
colleague asking for someone's personal passage get 404, exactly as for an id that does not exist."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import psycopg

from personal_agent.settings import get_settings
from tests.auth import auth_headers
from tests.conftest import Tenant
from tests.knowledge import upload_and_wait

HANDBOOK = "# Travel\n\nTrain tickets over two hundred euros need the manager's approval.\n"
DIARY = "Personal note: the quarterly review is on a Thursday.\n"


def _colleague(admin_url: str, tenant: Any) -> Tenant:
    subject = f"user-{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute(
            "INSERT INTO users (issuer, subject) VALUES (%s, %s) RETURNING id", [get_settings().dev_issuer, subject]
        ).fetchone()
        assert row
        conn.execute("INSERT INTO memberships (org_id, user_id) VALUES (%s, %s)", [tenant.org_id, row[0]])
    return Tenant(tenant.org_id, tenant.slug, row[0], subject)


async def _first_hit(http: httpx.AsyncClient, headers: dict[str, str], q: str, collection: str) -> dict[str, Any]:
    found = await http.get("/api/v1/knowledge/search", headers=headers, params={"q": q, "collection": collection})
    assert found.status_code == 200, found.text
    items = found.json()["items"]
    assert items, f"no passage for {q!r}"
    return dict(items[0])


async def test_a_cited_passage_opens_for_those_who_may_search_it(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    a, b = make_tenant(), make_tenant()
    mate = _colleague(admin_url, a)
    ha, hb, hmate = auth_headers(a), auth_headers(b), auth_headers(mate)
    await upload_and_wait(http, ha, a, "handbook.md", "text/markdown", HANDBOOK.encode())
    await upload_and_wait(http, ha, a, "diary.txt", "text/plain", DIARY.encode(), collection="personal")

    hit = await _first_hit(http, ha, "train tickets approval", "org")
    shown = await http.get(f"/api/v1/knowledge/chunks/{hit['chunk_id']}", headers=ha)
    assert shown.status_code == 200, shown.text
    passage = shown.json()
    assert passage["filename"] == "handbook.md"
    assert passage["section"] == "Travel"
    assert "manager's approval" in passage["text"]
    assert passage["citation"] == hit["citation"]
    # A colleague sees the org's passage too.
    assert (await http.get(f"/api/v1/knowledge/chunks/{hit['chunk_id']}", headers=hmate)).json()["text"] == (
        passage["text"]
    )

    own = await _first_hit(http, ha, "quarterly review Thursday", "personal")
    assert (await http.get(f"/api/v1/knowledge/chunks/{own['chunk_id']}", headers=ha)).status_code == 200
    # Another org, a colleague on someone's personal passage, and an id that never existed look the same.
    for headers, chunk in ((hb, hit["chunk_id"]), (hmate, own["chunk_id"]), (ha, str(uuid.uuid4()))):
        refused = await http.get(f"/api/v1/knowledge/chunks/{chunk}", headers=headers)
        assert refused.status_code == 404
        assert refused.json()["code"] == "chunk_not_found"
        assert "text" not in refused.json()
    assert (await http.get("/api/v1/knowledge/chunks/not-a-uuid", headers=ha)).status_code == 422
