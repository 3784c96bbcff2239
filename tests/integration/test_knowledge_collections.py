"""Named collections (issue 36, item 5) over the API and in SQL: an owner names readers and writers; a writer
uploads, a reader searches and cannot upload, a colleague who is not a member gets 404 and no passage (through the
API and as the app role in SQL), another org's member likewise; only owners change the members; an agent's
collections (by name or id) are searched for a member and give nothing to anyone else; search filters by
document, date and type."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import psycopg
import pytest

from personal_agent.agents.config import AgentConfig
from personal_agent.knowledge.search import search
from tests.auth import auth_headers
from tests.knowledge import register, upload_and_wait

POLICY = "Parental leave policy: every parent gets twenty weeks of paid leave, the pelican clause."
OTHER = "Canteen menu: lentil soup on Mondays."


def _member(admin_url: str, tenant: Any) -> Any:
    """Another member of `tenant`'s org, with an e-mail."""
    from personal_agent.settings import get_settings
    from tests.conftest import Tenant

    subject = f"user-{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute(
            "INSERT INTO users (issuer, subject, email) VALUES (%s, %s, %s) RETURNING id",
            [get_settings().dev_issuer, subject, f"{subject}@example.test"],
        ).fetchone()
        assert row
        conn.execute("INSERT INTO memberships (org_id, user_id) VALUES (%s, %s)", [tenant.org_id, row[0]])
    return Tenant(tenant.org_id, tenant.slug, row[0], subject)


def _chunks_seen(app_url: str, org_id: Any, user_id: Any) -> list[str]:
    with psycopg.connect(app_url) as conn:
        conn.execute("SELECT set_config('app.current_org', %s, false)", [str(org_id)])
        conn.execute("SELECT set_config('app.current_user', %s, false)", [str(user_id)])
        return [r[0] for r in conn.execute("SELECT text FROM knowledge_chunks")]


async def _search(http: httpx.AsyncClient, headers: dict[str, str], **params: Any) -> httpx.Response:
    return await http.get("/api/v1/knowledge/search", headers=headers, params={"q": "parental leave weeks", **params})


async def test_readers_search_writers_upload_and_nobody_else_sees_a_thing(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, app_url: str
) -> None:
    alice = make_tenant()
    bob, carol, dave = _member(admin_url, alice), _member(admin_url, alice), _member(admin_url, alice)
    eve = make_tenant()
    ha, hb, hc, hd, he = (auth_headers(t) for t in (alice, bob, carol, dave, eve))

    body = {"name": "HR policies", "readers": [f"{bob.subject}@example.test"], "writers": [str(carol.user_id)]}
    created = await http.post("/api/v1/knowledge/collections", headers=ha, json=body)
    assert created.status_code == 201, created.text
    hr = created.json()
    assert (hr["owners"], hr["writers"], hr["readers"]) == (
        [str(alice.user_id)],
        [str(carol.user_id)],
        [str(bob.user_id)],
    )
    again = await http.post("/api/v1/knowledge/collections", headers=hb, json={"name": "hr POLICIES"})
    assert (again.status_code, again.json()["code"]) == (409, "collection_exists")
    stranger = await http.post("/api/v1/knowledge/collections", headers=ha, json={"name": "x", "readers": ["nobody@x"]})
    assert (stranger.status_code, stranger.json()["code"]) == (422, "unknown_member")
    foreign = await http.post(
        "/api/v1/knowledge/collections", headers=ha, json={"name": "y", "readers": [str(eve.user_id)]}
    )
    assert (foreign.status_code, foreign.json()["code"]) == (422, "unknown_member")

    doc = await upload_and_wait(http, hc, carol, "leave.md", "text/markdown", POLICY.encode(), collection=hr["id"])
    assert (doc["status"], doc["collection"]) == ("ready", hr["id"])
    await upload_and_wait(http, ha, alice, "canteen.txt", "text/plain", OTHER.encode())

    by_reader = await http.post(
        "/api/v1/knowledge/documents",
        headers=hb,
        json={"filename": "x.md", "content_type": "text/markdown", "size": 3, "collection": hr["id"]},
    )
    assert (by_reader.status_code, by_reader.json()["code"]) == (403, "not_collection_writer")
    for headers in (hd, he):
        refused = await http.post(
            "/api/v1/knowledge/documents",
            headers=headers,
            json={"filename": "x.md", "content_type": "text/markdown", "size": 3, "collection": hr["id"]},
        )
        assert (refused.status_code, refused.json()["code"]) == (404, "collection_not_found")

    for headers in (hb, hc):  # a reader and a writer find it, in the collection and in a search of everything
        found = (await _search(http, headers, collection=hr["id"])).json()["items"]
        assert [p["document_id"] for p in found] == [doc["id"]]
        chunk = found[0]["chunk_id"]
        everything = (await _search(http, headers)).json()["items"]
        assert doc["id"] in {p["document_id"] for p in everything}

    for headers in (hd, he):  # a colleague who is not a member, another org's member: 404, and nothing anywhere
        missing = await _search(http, headers, collection=hr["id"])
        assert (missing.status_code, missing.json()["code"]) == (404, "collection_not_found")
        assert (await http.get(f"/api/v1/knowledge/collections/{hr['id']}", headers=headers)).status_code == 404
        assert (await http.get(f"/api/v1/knowledge/documents/{doc['id']}", headers=headers)).status_code == 404
        assert (await http.get(f"/api/v1/knowledge/chunks/{chunk}", headers=headers)).status_code == 404
        assert (await http.delete(f"/api/v1/knowledge/documents/{doc['id']}", headers=headers)).status_code == 404
        listed = (await http.get("/api/v1/knowledge/collections", headers=headers)).json()["items"]
        assert hr["id"] not in {c["id"] for c in listed}
        everything = (await _search(http, headers)).json()["items"]
        assert doc["id"] not in {p["document_id"] for p in everything}
    assert not [t for t in _chunks_seen(app_url, alice.org_id, dave.user_id) if "pelican" in t]
    assert [t for t in _chunks_seen(app_url, alice.org_id, bob.user_id) if "pelican" in t]

    # Only an owner changes the members; a removed reader loses the collection at once.
    patched = await http.patch(f"/api/v1/knowledge/collections/{hr['id']}", headers=hb, json={"readers": []})
    assert (patched.status_code, patched.json()["code"]) == (403, "not_collection_owner")
    patched = await http.patch(
        f"/api/v1/knowledge/collections/{hr['id']}", headers=ha, json={"readers": [str(dave.user_id)], "writers": []}
    )
    assert patched.status_code == 200, patched.text
    assert (patched.json()["readers"], patched.json()["writers"], patched.json()["owners"]) == (
        [str(dave.user_id)],
        [],
        [str(alice.user_id)],
    )
    assert (await _search(http, hb, collection=hr["id"])).status_code == 404
    assert [p["document_id"] for p in (await _search(http, hd, collection=hr["id"])).json()["items"]] == [doc["id"]]


async def test_an_agents_collections_by_name_or_id_are_searched_only_for_their_members(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    owner = make_tenant()
    outsider = _member(admin_url, owner)
    ho = auth_headers(owner)
    hr = (await http.post("/api/v1/knowledge/collections", headers=ho, json={"name": "Contract templates"})).json()
    doc = await upload_and_wait(http, ho, owner, "nda.md", "text/markdown", POLICY.encode(), collection=hr["id"])
    await upload_and_wait(http, ho, owner, "org.md", "text/markdown", ("Parental leave weeks. " + OTHER).encode())

    config = AgentConfig(name="Contracts", knowledge=["Contract templates"])
    for entries in (tuple(config.knowledge), (hr["id"],)):
        mine = await search(owner.org_id, owner.user_id, "parental leave weeks", agent_collections=entries)
        assert {p.document_id for p in mine.passages} == {uuid.UUID(doc["id"])}  # exactly its collection
        theirs = await search(owner.org_id, outsider.user_id, "parental leave weeks", agent_collections=entries)
        assert theirs.passages == []
    both = await search(owner.org_id, owner.user_id, "parental leave weeks", agent_collections=("org", hr["id"]))
    assert len({p.document_id for p in both.passages}) == 2


async def test_search_filters_by_document_date_and_type(http: httpx.AsyncClient, make_tenant: Any) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    md = await upload_and_wait(http, headers, tenant, "a.md", "text/markdown", POLICY.encode(), collection="personal")
    txt = await upload_and_wait(
        http,
        headers,
        tenant,
        "b.txt",
        "text/plain",
        ("Parental leave weeks, again. " + OTHER).encode(),
        collection="personal",
    )
    ids = lambda response: {p["document_id"] for p in response.json()["items"]}  # noqa: E731
    assert ids(await _search(http, headers, collection="personal")) == {md["id"], txt["id"]}
    assert ids(await _search(http, headers, collection="personal", document_id=txt["id"])) == {txt["id"]}
    assert ids(await _search(http, headers, collection="personal", type="markdown")) == {md["id"]}
    assert ids(await _search(http, headers, collection="personal", type="text/plain")) == {txt["id"]}
    later = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    assert ids(await _search(http, headers, collection="personal", since=later)) == set()
    assert ids(await _search(http, headers, collection="personal", until=later)) == {md["id"], txt["id"]}
    bad = await _search(http, headers, type="gif")
    assert (bad.status_code, bad.json()["code"]) == (422, "invalid_type")
    registered = await register(http, headers, "c.md", "text/markdown", 3, collection="personal")
    assert registered["document"]["collection"] == "personal"


async def test_a_sources_schedule_fires_once_per_due_time_and_other_buckets_are_refused(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    import asyncio

    import boto3

    from personal_agent.knowledge.sources import bucket_allowed
    from personal_agent.local.source_scheduler import SourceScheduler
    from personal_agent.settings import get_settings

    tenant = make_tenant()
    reader = _member(admin_url, tenant)
    headers = auth_headers(tenant)
    settings = get_settings()
    s3 = boto3.client("s3", endpoint_url=settings.aws_endpoint_url, region_name=settings.aws_region)
    bucket = f"src-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="kb/one.txt", Body=b"The walrus handbook says hello.", ContentType="text/plain")
    body = {"name": "Scheduled", "readers": [str(reader.user_id)]}
    collection = (await http.post("/api/v1/knowledge/collections", headers=headers, json=body)).json()
    source_body = {
        "kind": "s3",
        "collection": collection["id"],
        "bucket": bucket,
        "prefix": "kb/",
        "every": "rate(1 hour)",
    }

    by_reader = await http.post("/api/v1/knowledge/sources", headers=auth_headers(reader), json=source_body)
    assert (by_reader.status_code, by_reader.json()["code"]) == (403, "not_collection_writer")
    bad = await http.post("/api/v1/knowledge/sources", headers=headers, json={**source_body, "every": "every hour"})
    assert (bad.status_code, bad.json()["code"]) == (422, "invalid_schedule_expression")
    created = await http.post("/api/v1/knowledge/sources", headers=headers, json=source_body)
    assert created.status_code == 201, created.text
    source = created.json()
    due = datetime.fromisoformat(source["next_sync_at"])
    assert timedelta(minutes=59) < due - datetime.now(UTC) <= timedelta(hours=1)

    async def last_sync() -> dict[str, Any] | None:
        shown = await http.get(f"/api/v1/knowledge/sources/{source['id']}", headers=headers)
        return shown.json()["last_sync"]

    async def synced_after(previous: str | None) -> dict[str, Any]:
        for _ in range(400):  # the sync job runs on the ingest queue's poller
            last = await last_sync()
            if last is not None and last["at"] != previous:
                return last
            await asyncio.sleep(0.1)
        raise AssertionError("the source did not sync")

    first = await synced_after(None)
    assert first["added"] == 1
    scheduler = SourceScheduler(clock=lambda: due + timedelta(seconds=1))
    assert await scheduler.tick() == [uuid.UUID(source["id"])]
    assert await scheduler.tick() == []  # moved on: the same due time fires once
    second = await synced_after(first["at"])
    assert (second["added"], second["unchanged"]) == (0, 1)
    moved = (await http.get(f"/api/v1/knowledge/sources/{source['id']}", headers=headers)).json()["next_sync_at"]
    assert datetime.fromisoformat(moved) == due + timedelta(hours=1)

    # Its EventBridge schedule (moto here) goes with the collection, as do the source and its documents.
    scheduler = boto3.client("scheduler", endpoint_url=settings.aws_endpoint_url, region_name=settings.aws_region)
    name, group = f"pa-ks-{source['id']}", settings.schedule_group
    assert scheduler.get_schedule(Name=name, GroupName=group)["ScheduleExpression"] == "rate(1 hour)"
    assert (await http.delete(f"/api/v1/knowledge/collections/{collection['id']}", headers=headers)).status_code == 204
    with pytest.raises(scheduler.exceptions.ResourceNotFoundException):
        scheduler.get_schedule(Name=name, GroupName=group)
    assert (await http.get(f"/api/v1/knowledge/sources/{source['id']}", headers=headers)).status_code == 404
    listed = (await http.get("/api/v1/knowledge/documents", headers=headers)).json()["items"]
    assert collection["id"] not in {d["collection"] for d in listed}

    # On AWS (not local) only the buckets the operator listed: nobody syncs another tenant's bucket.
    assert not bucket_allowed(bucket, "", local=False)
    assert not bucket_allowed(bucket, "ours-a,ours-b", local=True)
    assert bucket_allowed("ours-b", "ours-a, ours-b", local=False)


async def _search_then_name_documents(messages: list[Any], info: Any) -> AsyncIterator[Any]:
    """The scripted model: search the knowledge base once, then answer with the documents its passages came from."""
    from pydantic_ai.messages import ModelRequest, ToolReturnPart
    from pydantic_ai.models.function import DeltaToolCall

    from tests.scripted import tool_rounds

    if tool_rounds(messages) == 0:
        yield {
            0: DeltaToolCall(name="search_knowledge", json_args='{"query": "parental leave weeks"}', tool_call_id="k")
        }
        return
    (found,) = [
        p.content for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)
    ]
    yield ",".join(sorted({item["document"] for item in found if "document" in item})) or "nothing"


async def test_an_agent_run_searches_exactly_its_collection_and_only_for_members(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    from tests.runs import start_run
    from tests.scripted import scripted_model
    from tests.sse import read_events

    owner = make_tenant(roles=("org-admin",))  # who shares an agent with the org
    outsider = _member(admin_url, owner)
    ho, hx = auth_headers(owner, roles=("org-admin",)), auth_headers(outsider)
    hr = (await http.post("/api/v1/knowledge/collections", headers=ho, json={"name": "HR policies"})).json()
    await upload_and_wait(http, ho, owner, "leave.md", "text/markdown", POLICY.encode(), collection=hr["id"])
    await upload_and_wait(http, ho, owner, "org.md", "text/markdown", ("Parental leave weeks. " + OTHER).encode())
    agent = {
        "name": "HR bot",
        "slug": "hr-bot",
        "instructions": "Answer from the HR policies.",
        "tools": ["search_knowledge"],
        "knowledge": ["HR policies"],
        "visibility": "org",
    }
    created = await http.post("/api/v1/agents", json=agent, headers=ho)
    assert created.status_code == 201, created.text
    answers = {}
    with scripted_model(_search_then_name_documents) as (model, _):
        for who, headers in (("owner", ho), ("outsider", hx)):
            chat = (await http.post("/api/v1/chats", json={"agent": "hr-bot"}, headers=headers)).json()
            run = await start_run(http, headers, model, "how long is parental leave?", chat_id=chat["id"])
            frames = await read_events(http, run["events_url"], headers)
            answers[who] = "".join(f.data["delta"] for f in frames if f.type == "TEXT_MESSAGE_CONTENT")
    assert answers == {"owner": "leave.md", "outsider": "nothing"}  # its collection only; nothing for a non-member
