"""Projects (issue 38, item 2) over the API: an owner makes one (with a collection of its own), names viewers and
editors; members read the project's chats, viewers cannot write in them or move chats, editors can; a colleague who
is not a member and another org's member get 404 everywhere; a restricted chat joins no project; the chat list and
its search filter by project; deleting the project moves its chats out. And a run in a project's chat gets the
project's instructions (as instructions), its default agent, and only the project's memories; so does a sub-agent
of such a run (it remembers into the project's scope and recalls only its memories)."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import psycopg
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from personal_agent.memories.instructions import latest_user_text
from tests.auth import auth_headers
from tests.runs import start_run
from tests.scripted import scripted_model, tool_rounds
from tests.sse import read_events

PROJECT_RULE = "Always answer with a haiku."
GLOBAL_FACT = "Lives in Ghent"
PROJECT_FACT = "The launch codename is Pelican"


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


async def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json() if response.content else None


def _code(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json().get("code", "")


async def _chat(http: httpx.AsyncClient, headers: dict[str, str], title: str, **body: Any) -> str:
    created = await _ok(await http.post("/api/v1/chats", json={"title": title, **body}, headers=headers), 201)
    return str(created["id"])


async def _move(http: httpx.AsyncClient, headers: dict[str, str], chat: str, project: str | None) -> httpx.Response:
    return await http.patch(f"/api/v1/chats/{chat}", json={"project_id": project}, headers=headers)


async def _listed(http: httpx.AsyncClient, headers: dict[str, str], **params: Any) -> list[str]:
    page = await _ok(await http.get("/api/v1/chats", params=params, headers=headers))
    return [c["id"] for c in page["items"]]


async def test_members_see_the_projects_chats_viewers_only_read_and_nobody_else_sees_a_thing(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    alice = make_tenant()
    bob, carol, dave = _member(admin_url, alice), _member(admin_url, alice), _member(admin_url, alice)
    eve = make_tenant()
    ha, hb, hc, hd, he = (auth_headers(t) for t in (alice, bob, carol, dave, eve))

    body = {"name": "Q3 launch", "instructions": PROJECT_RULE}
    project = await _ok(await http.post("/api/v1/projects", json=body, headers=ha), 201)
    pid = project["id"]
    assert (project["role"], project["instructions"], project["agent"]) == ("owner", PROJECT_RULE, None)
    assert project["collection_id"] and [m["role"] for m in project["members"]] == ["owner"]
    plan = await _chat(http, ha, "Launch plan")
    moved = await _ok(await _move(http, ha, plan, pid))
    assert moved["project_id"] == pid

    for headers in (hb, he):  # not (yet) a member; another org's member
        assert _code(await http.get(f"/api/v1/projects/{pid}", headers=headers)) == (404, "project_not_found")
        assert _code(await http.get(f"/api/v1/chats/{plan}", headers=headers)) == (404, "chat_not_found")
        missing = await http.get("/api/v1/chats", params={"project_id": pid}, headers=headers)
        assert _code(missing) == (404, "project_not_found")
        assert pid not in [p["id"] for p in (await _ok(await http.get("/api/v1/projects", headers=headers)))["items"]]
    outsider = await http.post(f"/api/v1/projects/{pid}/members", json={"user_id": str(eve.user_id)}, headers=ha)
    assert _code(outsider) == (422, "unknown_member")

    bob_email = f"{bob.subject}@example.test"
    await _ok(await http.post(f"/api/v1/projects/{pid}/members", json={"email": bob_email}, headers=ha))
    body = {"user_id": str(carol.user_id), "role": "editor"}
    people = await _ok(await http.post(f"/api/v1/projects/{pid}/members", json=body, headers=ha))
    assert sorted(m["role"] for m in people) == ["editor", "owner", "viewer"]

    # Bob, a viewer: reads the chat and its transcript, and cannot write in it, move it, or change the project.
    seen = await _ok(await http.get(f"/api/v1/chats/{plan}", headers=hb))
    assert (seen["title"], seen["can_post"]) == ("Launch plan", False)  # the web chat shows no composer
    assert (await _ok(await http.get(f"/api/v1/chats/{plan}", headers=ha)))["can_post"] is True
    await _ok(await http.get(f"/api/v1/chats/{plan}/messages", headers=hb))
    assert plan in await _listed(http, hb, project_id=pid)
    run = await http.post(f"/api/v1/chats/{plan}/runs", json={"message": "hi", "mode": "inline"}, headers=hb)
    assert _code(run) == (403, "project_read_only")
    assert _code(await _move(http, hb, plan, None)) == (403, "project_read_only")
    own = await _chat(http, hb, "Bob's notes")
    assert _code(await _move(http, hb, own, pid)) == (403, "project_read_only")
    change = await http.patch(f"/api/v1/projects/{pid}", json={"name": "Mine"}, headers=hb)
    assert _code(change) == (403, "not_project_owner")
    assert _code(await http.delete(f"/api/v1/chats/{plan}", headers=hb)) == (404, "chat_not_found")

    # Carol, an editor: moves her chat in; a restricted or temporary chat joins no project.
    notes = await _chat(http, hc, "Carol's launch notes about pelicans")
    await _ok(await _move(http, hc, notes, pid))
    assert set(await _listed(http, ha, project_id=pid)) == {plan, notes}
    assert (await _ok(await http.get(f"/api/v1/chats/{plan}", headers=hc)))["can_post"] is True
    by_bob = await _ok(await http.get("/api/v1/chats", params={"project_id": pid, "q": "pelicans"}, headers=hb))
    assert [(c["id"], c["can_post"]) for c in by_bob["items"]] == [(notes, False)]
    assert await _listed(http, ha, project_id=pid, q="pelicans") == [notes]  # the search filters by project too
    secret = await _chat(http, hc, "Salaries", classification="restricted")
    assert _code(await _move(http, hc, secret, pid)) == (409, "chat_restricted")
    temporary = await _chat(http, hc, "Scratch", temporary=True)
    assert _code(await _move(http, hc, temporary, pid)) == (409, "chat_temporary")
    assert _code(await http.get(f"/api/v1/chats/{secret}", headers=hb)) == (404, "chat_not_found")

    # Dave (no member) stays out; Bob removed is out again; the last owner stays.
    assert _code(await http.get(f"/api/v1/chats/{notes}", headers=hd)) == (404, "chat_not_found")
    await _ok(await http.delete(f"/api/v1/projects/{pid}/members/{bob.user_id}", headers=ha))
    assert _code(await http.get(f"/api/v1/chats/{plan}", headers=hb)) == (404, "chat_not_found")
    last = await http.delete(f"/api/v1/projects/{pid}/members/{alice.user_id}", headers=ha)
    assert _code(last) == (409, "last_project_owner")

    # Deleting: not by an editor; by the owner, and the chats move out and stay their owners'.
    assert _code(await http.delete(f"/api/v1/projects/{pid}", headers=hc)) == (403, "not_project_owner")
    await _ok(await http.delete(f"/api/v1/projects/{pid}", headers=ha), 204)
    assert (await _ok(await http.get(f"/api/v1/chats/{notes}", headers=hc)))["project_id"] is None
    assert _code(await http.get(f"/api/v1/chats/{notes}", headers=ha)) == (404, "chat_not_found")


async def test_bad_project_input_is_refused_with_a_clear_code(http: httpx.AsyncClient, make_tenant: Any) -> None:
    headers = auth_headers(make_tenant())
    for body, code in [
        ({"name": "   "}, "invalid_project_name"),
        ({"name": "x", "agent": "no-such-agent"}, "agent_not_found"),
        ({"name": "x", "collection_id": str(uuid.uuid4())}, "collection_not_found"),
    ]:
        response = await http.post("/api/v1/projects", json=body, headers=headers)
        assert response.status_code in (404, 422) and response.json()["code"] == code, response.text
    assert (await _ok(await http.get("/api/v1/projects", headers=headers)))["items"] == []
    missing = await _move(http, headers, await _chat(http, headers, "x"), str(uuid.uuid4()))
    assert _code(missing) == (404, "project_not_found")


async def _remember(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    if tool_rounds(messages) == 0:
        args = json.dumps({"fact": PROJECT_FACT})
        yield {0: DeltaToolCall(name="remember", json_args=args, tool_call_id="mem_1")}
    else:
        yield "Noted."


async def _echo_instructions(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    yield info.instructions or ""


async def _answer(http: httpx.AsyncClient, headers: dict[str, str], model: str, chat: str) -> str:
    run = await start_run(http, headers, model, "what should I write?", chat_id=chat)
    frames = await read_events(http, run["events_url"], headers)
    assert frames[-1].type == "RUN_FINISHED", frames[-1]
    return "".join(f.data["delta"] for f in frames if f.type == "TEXT_MESSAGE_CONTENT")


async def test_a_projects_instructions_default_agent_and_memories_reach_its_runs_only(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    alice = make_tenant()
    carol = _member(admin_url, alice)
    ha, hc = auth_headers(alice), auth_headers(carol)
    agent = {"name": "Launch writer", "slug": "launch-writer", "instructions": "You write launch notes."}
    await _ok(await http.post("/api/v1/agents", json=agent, headers=ha), 201)
    await _ok(await http.post("/api/v1/me/memories", json={"text": GLOBAL_FACT}, headers=ha), 201)
    body = {"name": "Launch", "instructions": PROJECT_RULE, "agent": "launch-writer"}
    project = await _ok(await http.post("/api/v1/projects", json=body, headers=ha), 201)
    assert project["agent"] == "launch-writer"
    first, second, outside = [await _chat(http, ha, t) for t in ("one", "two", "outside")]
    for chat in (first, second):
        await _ok(await _move(http, ha, chat, project["id"]))

    with scripted_model(_remember) as (model, _):
        await _answer(http, ha, model, first)  # saved in the project's scope
    saved = (await _ok(await http.get("/api/v1/me/memories", headers=ha)))["items"]
    assert {m["text"]: m["project_id"] for m in saved} == {PROJECT_FACT: project["id"], GLOBAL_FACT: None}
    with scripted_model(_echo_instructions) as (model, _):
        inside = await _answer(http, ha, model, second)
        elsewhere = await _answer(http, ha, model, outside)
    assert "You write launch notes." in inside and PROJECT_RULE in inside  # the default agent's, then the project's
    assert inside.index("You write launch notes.") < inside.index(PROJECT_RULE)
    assert PROJECT_FACT in inside and GLOBAL_FACT not in inside  # only the project's memories
    assert PROJECT_RULE not in elsewhere and PROJECT_FACT not in elsewhere and GLOBAL_FACT in elsewhere
    assert "You write launch notes." not in elsewhere

    # An editor writes in the owner's project chat; the project's instructions reach that run too.
    await _ok(
        await http.post(
            f"/api/v1/projects/{project['id']}/members",
            json={"user_id": str(carol.user_id), "role": "editor"},
            headers=ha,
        )
    )
    with scripted_model(_echo_instructions) as (model, _):
        carols = await _answer(http, hc, model, second)
    assert PROJECT_RULE in carols and PROJECT_FACT not in carols  # Alice's project memories are hers
    assert "You write launch notes." not in carols  # Alice's private agent: Carol gets the built-in one

    # Changing the instructions changes the next run; a chat moved out leaves them behind.
    changed = {"instructions": "Answer in French.", "agent": None}
    updated = await _ok(await http.patch(f"/api/v1/projects/{project['id']}", json=changed, headers=ha))
    assert updated["agent"] is None
    with scripted_model(_echo_instructions) as (model, _):
        after = await _answer(http, ha, model, second)
        await _ok(await _move(http, ha, second, None))
        moved_out = await _answer(http, ha, model, second)
    assert "Answer in French." in after and PROJECT_RULE not in after and "You write launch notes." not in after
    assert "Answer in French." not in moved_out and GLOBAL_FACT in moved_out


POLICY = "Launch checklist: the pelican banner goes up at nine, and the press embargo lifts at noon."


async def _search_then_echo(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    """Calls `search_knowledge` once, then answers with what it returned."""
    if tool_rounds(messages) == 0:
        args = json.dumps({"query": "pelican banner press embargo"})
        yield {0: DeltaToolCall(name="search_knowledge", json_args=args, tool_call_id="kb_1")}
    else:
        yield str(messages[-1].parts[0].content)  # type: ignore[union-attr]


async def _search(http: httpx.AsyncClient, headers: dict[str, str], collection: str) -> httpx.Response:
    params = {"q": "pelican banner embargo", "collection": collection}
    return await http.get("/api/v1/knowledge/search", headers=headers, params=params)


async def test_the_projects_collection_holds_its_files_for_its_members_and_its_runs(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    from tests.knowledge import upload_and_wait

    alice = make_tenant()
    bob, carol, dave = _member(admin_url, alice), _member(admin_url, alice), _member(admin_url, alice)
    ha, hb, hc, hd = (auth_headers(t) for t in (alice, bob, carol, dave))
    agent = {"name": "Org only", "slug": "org-only", "instructions": "Use the org's documents.", "knowledge": ["org"]}
    await _ok(await http.post("/api/v1/agents", json=agent, headers=ha), 201)
    body = {"name": "Press", "agent": "org-only"}
    project = await _ok(await http.post("/api/v1/projects", json=body, headers=ha), 201)
    pid, collection = project["id"], project["collection_id"]
    for person, role in ((bob, "viewer"), (carol, "editor")):
        body = {"user_id": str(person.user_id), "role": role}
        await _ok(await http.post(f"/api/v1/projects/{pid}/members", json=body, headers=ha))

    # The project's members are its collection's: an editor adds files, a viewer reads them, nobody else sees them.
    doc = await upload_and_wait(http, hc, carol, "launch.md", "text/markdown", POLICY.encode(), collection=collection)
    found = (await _ok(await _search(http, hb, collection)))["items"]
    assert [p["document_id"] for p in found] == [doc["id"]]
    body = {"filename": "x.md", "content_type": "text/markdown", "size": 3, "collection": collection}
    by_viewer = await http.post("/api/v1/knowledge/documents", headers=hb, json=body)
    assert _code(by_viewer) == (403, "not_collection_writer")
    assert _code(await _search(http, hd, collection)) == (404, "collection_not_found")

    # A run in a project chat with an agent limited to the org's documents searches the project's collection too;
    # the same agent outside the project does not.
    inside = await _chat(http, ha, "inside")
    outside = await _chat(http, ha, "outside", agent="org-only")
    await _ok(await _move(http, ha, inside, pid))
    with scripted_model(_search_then_echo) as (model, _):
        in_project = await _answer(http, ha, model, inside)
        elsewhere = await _answer(http, ha, model, outside)
    assert "pelican banner" in in_project and doc["id"] in in_project
    assert "pelican banner" not in elsewhere

    await _ok(await http.delete(f"/api/v1/projects/{pid}/members/{bob.user_id}", headers=ha))
    assert _code(await _search(http, hb, collection)) == (404, "collection_not_found")


SUBAGENT_FACT = "The press room is on floor 7"


async def _delegate_memory(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    """The parent (`delegate: <task>`) hands the task to a sub-agent and answers with what it said; the sub-agent
    remembers a `remember: <fact>` task, and answers a `recall` task with its instructions (the memories in them)."""
    text = latest_user_text(messages)
    last = messages[-1]
    answered = isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts)
    if text.startswith("delegate: "):
        if not answered:
            args = json.dumps({"task": text.removeprefix("delegate: ")})
            yield {0: DeltaToolCall(name="delegate", json_args=args, tool_call_id="sub_1")}
        else:
            yield "Sub-agent said: " + str(last.parts[0].content)  # type: ignore[union-attr]
    elif text.startswith("remember: "):
        if not answered:
            args = json.dumps({"fact": text.removeprefix("remember: ")})
            yield {0: DeltaToolCall(name="remember", json_args=args, tool_call_id="mem_sub")}
        else:
            yield "Noted."
    else:
        yield info.instructions or ""


async def test_a_sub_agent_of_a_project_run_remembers_and_recalls_in_the_projects_scope(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    alice = make_tenant()
    ha = auth_headers(alice)
    await _ok(await http.post("/api/v1/me/memories", json={"text": GLOBAL_FACT}, headers=ha), 201)
    project = await _ok(await http.post("/api/v1/projects", json={"name": "Press"}, headers=ha), 201)
    chat = await _chat(http, ha, "press")
    await _ok(await _move(http, ha, chat, project["id"]))

    async def turn(message: str, model: str) -> str:
        body = {"message": message, "model": model, "mode": "inline", "tools": ["delegate", "remember"]}
        run = await _ok(await http.post(f"/api/v1/chats/{chat}/runs", json=body, headers=ha), 202)
        frames = await read_events(http, run["events_url"], ha, timeout=60)
        assert frames[-1].type == "RUN_FINISHED", frames[-1]
        return "".join(f.data["delta"] for f in frames if f.type == "TEXT_MESSAGE_CONTENT")

    with scripted_model(_delegate_memory) as (model, _):
        assert "Noted." in await turn(f"delegate: remember: {SUBAGENT_FACT}", model)
        saved = (await _ok(await http.get("/api/v1/me/memories", headers=ha)))["items"]
        assert {m["text"]: m["project_id"] for m in saved} == {SUBAGENT_FACT: project["id"], GLOBAL_FACT: None}
        recalled = await turn("delegate: recall what you know", model)
    assert SUBAGENT_FACT in recalled and GLOBAL_FACT not in recalled  # the project's memories only
