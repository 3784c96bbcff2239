"""Who sees which chunks: org B never sees org A's (as the app role in SQL, and through the API), a user's
personal collection is invisible to colleagues (a restrictive RLS policy on the owner), a chat's files are
searchable only in that chat, and a deleted document leaves no chunk and no file."""

from __future__ import annotations

import os
import uuid
from typing import Any

import boto3
import httpx
import psycopg
import pytest
from botocore.exceptions import ClientError

from personal_agent.knowledge.documents import create_document
from personal_agent.knowledge.search import search
from tests.auth import auth_headers
from tests.knowledge import make_pdf, post_file, upload_and_wait, wait_for_status

SECRET = "The merger codename is Bluefin and closes in March."
PRIVATE = "My salary negotiation target is ninety thousand."


def _colleague(admin_url: str, tenant: Any) -> Any:
    """A second member of `tenant`'s org."""
    from personal_agent.settings import get_settings
    from tests.conftest import Tenant

    subject = f"user-{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute(
            "INSERT INTO users (issuer, subject) VALUES (%s, %s) RETURNING id", [get_settings().dev_issuer, subject]
        ).fetchone()
        assert row
        conn.execute("INSERT INTO memberships (org_id, user_id) VALUES (%s, %s)", [tenant.org_id, row[0]])
    return Tenant(tenant.org_id, tenant.slug, row[0], subject)


def _visible_chunks(app_url: str, org_id: Any, user_id: Any | None) -> list[str]:
    """Chunk texts the app role sees with this org (and user) set, as every request sets them."""
    with psycopg.connect(app_url) as conn:
        conn.execute("SELECT set_config('app.current_org', %s, false)", [str(org_id)])
        if user_id is not None:
            conn.execute("SELECT set_config('app.current_user', %s, false)", [str(user_id)])
        return [r[0] for r in conn.execute("SELECT text FROM knowledge_chunks")]


async def test_orgs_and_colleagues_never_see_what_is_not_theirs(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, app_url: str
) -> None:
    a, b = make_tenant(), make_tenant()
    mate = _colleague(admin_url, a)
    ha, hb, hmate = auth_headers(a), auth_headers(b), auth_headers(mate)
    shared = await upload_and_wait(http, ha, a, "merger.md", "text/markdown", f"# Deals\n\n{SECRET}\n".encode())
    own = await upload_and_wait(
        http, ha, a, "notes.txt", "text/plain", PRIVATE.encode(), collection="personal", classification="confidential"
    )
    assert (shared["status"], own["status"], own["collection"]) == ("ready", "ready", "personal")

    # SQL, as the app role: B sees nothing of A; A's colleague sees the org's chunk, not A's own.
    assert _visible_chunks(app_url, b.org_id, b.user_id) == []
    assert _visible_chunks(app_url, a.org_id, None) == [SECRET]
    assert _visible_chunks(app_url, a.org_id, mate.user_id) == [SECRET]
    assert sorted(_visible_chunks(app_url, a.org_id, a.user_id)) == sorted([SECRET, PRIVATE])

    # The API: the same query from each caller.
    async def hits(headers: dict[str, str], q: str) -> list[str]:
        found = await http.get("/api/v1/knowledge/search", headers=headers, params={"q": q})
        assert found.status_code == 200, found.text
        return [p["text"] for p in found.json()["items"]]

    assert await hits(hb, "merger codename Bluefin") == []
    assert PRIVATE in await hits(ha, "salary negotiation target")
    assert PRIVATE not in await hits(hmate, "salary negotiation target")
    assert SECRET in await hits(hmate, "merger codename Bluefin")
    for headers in (hb, hmate):  # someone else's document is not found, whatever the verb
        assert (await http.get(f"/api/v1/knowledge/documents/{own['id']}", headers=headers)).status_code == 404
        assert (await http.delete(f"/api/v1/knowledge/documents/{own['id']}", headers=headers)).status_code == 404
        listed = (await http.get("/api/v1/knowledge/documents", headers=headers)).json()["items"]
        assert own["id"] not in {d["id"] for d in listed}
    assert (await http.get(f"/api/v1/knowledge/documents/{shared['id']}", headers=hb)).status_code == 404

    # Deleting removes the row, every chunk and the file.
    key = f"documents/{a.org_id}/{own['id']}/notes.txt"
    assert (await http.delete(f"/api/v1/knowledge/documents/{own['id']}", headers=ha)).status_code == 204
    assert sorted(_visible_chunks(app_url, a.org_id, a.user_id)) == [SECRET]
    with pytest.raises(ClientError):
        boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"]).head_object(
            Bucket=os.environ["PA_DOCUMENTS_BUCKET"], Key=key
        )


async def test_a_chats_files_are_searchable_in_that_chat_only(http: httpx.AsyncClient, make_tenant: Any) -> None:
    import asyncio

    tenant = make_tenant()
    headers = auth_headers(tenant)
    chats = [(await http.post("/api/v1/chats", headers=headers, json={"title": t})).json()["id"] for t in "xy"]
    chat, other = uuid.UUID(chats[0]), uuid.UUID(chats[1])
    data = make_pdf(["The whiteboard photo lists the retro action items: fix flaky deploys."])
    # As the attachments code does it: a chat-scoped document through the knowledge service.
    created = await create_document(
        tenant.org_id,
        tenant.user_id,
        collection=f"chat:{chat}",
        filename="retro.pdf",
        content_type="application/pdf",
        size=len(data),
    )
    assert (await asyncio.to_thread(post_file, created["upload"], data)).status_code == 204
    done = await asyncio.to_thread(wait_for_status, tenant.org_id, tenant.user_id, str(created["document"]["id"]))
    assert done["status"] == "ready"

    q = "retro action items flaky deploys"
    in_chat = await search(tenant.org_id, tenant.user_id, q, chat_id=chat)
    assert [p.filename for p in in_chat.passages] == ["retro.pdf"]
    assert (await search(tenant.org_id, tenant.user_id, q, chat_id=other)).passages == []
    assert (await search(tenant.org_id, tenant.user_id, q)).passages == []  # not in the org's or personal search
    found = await http.get("/api/v1/knowledge/search", headers=headers, params={"q": q})
    assert found.json()["items"] == []
