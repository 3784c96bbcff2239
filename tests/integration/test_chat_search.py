"""Searching chats finds words inside their messages (Postgres full text), not only in titles, and never
another user's or another org's chats."""

from __future__ import annotations

from typing import Any

import httpx

from tests.auth import auth_headers
from tests.runs import start_run
from tests.sse import read_events


async def _chat_with(http: httpx.AsyncClient, headers: dict[str, str], model: str, title: str, said: str) -> str:
    chat = await http.post("/api/v1/chats", json={"title": title}, headers=headers)
    run = await start_run(http, headers, model, message=said, chat_id=chat.json()["id"])
    frames = await read_events(http, run["events_url"], headers)
    assert frames[-1].type == "RUN_FINISHED", frames[-1]
    return str(chat.json()["id"])


async def _search(http: httpx.AsyncClient, headers: dict[str, str], q: str) -> list[dict[str, Any]]:
    found = await http.get("/api/v1/chats", params={"q": q}, headers=headers)
    assert found.status_code == 200, found.text
    return list(found.json()["items"])


async def test_search_finds_words_in_messages_with_a_snippet_and_stays_in_the_users_chats(
    http: httpx.AsyncClient, make_tenant: Any, echo_model: str
) -> None:
    alice = make_tenant()
    headers = auth_headers(alice)
    trip = await _chat_with(http, headers, echo_model, "Holiday", "Book the ferries to the Orkney islands in May")
    budget = await _chat_with(http, headers, echo_model, "Numbers", "Quarterly budget for the platform team")

    # A word only in a message (stemmed: "ferry" finds "ferries"), and the assistant's answer counts too.
    hits = await _search(http, headers, "ferry orkney")
    assert [h["id"] for h in hits] == [trip]
    assert "Orkney" in hits[0]["snippet"]
    assert [h["id"] for h in await _search(http, headers, "echo quarterly")] == [budget]
    # Titles still match as before, without a snippet when no message matches.
    title_hit = await _search(http, headers, "Holi")
    assert [h["id"] for h in title_hit] == [trip] and title_hit[0]["snippet"] is None
    # Web-search syntax: a quoted phrase and an excluded word.
    assert [h["id"] for h in await _search(http, headers, '"platform team"')] == [budget]
    assert {h["id"] for h in await _search(http, headers, "the -orkney")} == {budget}
    assert await _search(http, headers, "submarine") == []
    # A listing without a query carries no snippets.
    listed = (await http.get("/api/v1/chats", headers=headers)).json()["items"]
    assert {c["id"] for c in listed} == {trip, budget} and all(c["snippet"] is None for c in listed)

    # Another user of the same org and a user of another org find nothing of Alice's.
    colleague = make_tenant()
    same_org = auth_headers(colleague, org_slug=alice.slug)
    other_org = auth_headers(make_tenant())
    assert await _search(http, other_org, "orkney") == []
    member = await http.get("/api/v1/chats", params={"q": "orkney"}, headers=same_org)
    assert member.status_code in (200, 403) and (member.status_code == 403 or member.json()["items"] == [])


async def test_search_rows_are_scoped_by_rls_in_sql(make_tenant: Any, app_url: str, admin_url: str) -> None:
    """The full-text column answers only inside the org set on the connection (forced RLS on `messages`)."""
    import psycopg

    tenant = make_tenant()
    with psycopg.connect(admin_url, autocommit=True) as owner:
        chat = owner.execute(
            "INSERT INTO chats (org_id, user_id, title) VALUES (%s, %s, 't') RETURNING id",
            [tenant.org_id, tenant.user_id],
        ).fetchone()
        assert chat
        message = {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "zanzibar spices"}]}
        owner.execute(
            "INSERT INTO messages (org_id, chat_id, kind, message) VALUES (%s, %s, 'request', %s)",
            [tenant.org_id, chat[0], psycopg.types.json.Jsonb(message)],
        )
    query = "SELECT count(*) FROM messages WHERE search_tsv @@ websearch_to_tsquery('english', 'zanzibar')"
    with psycopg.connect(app_url, autocommit=True) as app:
        assert app.execute(query).fetchone() == (0,)  # no org set: fail closed
        app.execute("SELECT set_config('app.current_org', %s, false)", [str(tenant.org_id)])
        assert app.execute(query).fetchone() == (1,)
        app.execute("SELECT set_config('app.current_org', %s, false)", [str(make_tenant().org_id)])
        assert app.execute(query).fetchone() == (0,)
