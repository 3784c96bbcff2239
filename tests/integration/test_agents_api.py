"""Agents over the API: create, list, read, change (each change a new version), publish and roll back, diff,
export and import; bad input is a 422 with a stable code and stores nothing; private agents are their owner's,
sharing with the org needs an org admin, and another org's or a colleague's private agent is a 404."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import psycopg
import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, RetryPromptPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from tests.auth import auth_headers
from tests.members import colleague_of
from tests.runs import start_run
from tests.scripted import scripted_model, tool_rounds
from tests.sse import read_events

pytestmark = pytest.mark.usefixtures("stack")

REVIEWER: dict[str, Any] = {
    "name": "Contract reviewer",
    "slug": "contract-reviewer",
    "description": "Reviews contracts",
    "instructions": "You review contracts. Quote the clause you mean.",
    "tools": ["calculate"],
    "starter_prompts": ["Review this NDA"],
}


async def create(client: httpx.AsyncClient, headers: dict[str, str], **overrides: Any) -> dict[str, Any]:
    response = await client.post("/api/v1/agents", json={**REVIEWER, **overrides}, headers=headers)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def agent_count(admin_url: str, org_id: uuid.UUID) -> int:
    with psycopg.connect(admin_url) as conn:
        row = conn.execute("SELECT count(*) FROM agents WHERE org_id = %s", [org_id]).fetchone()
        assert row is not None
        return int(row[0])


async def test_create_list_get_and_the_builtin_assistant(client: httpx.AsyncClient, make_tenant: Any) -> None:
    alice = make_tenant()
    headers = auth_headers(alice)
    agent = await create(client, headers)
    assert agent["slug"] == "contract-reviewer" and agent["published_version"] == 1 and agent["visibility"] == "private"
    assert agent["instructions"] == REVIEWER["instructions"] and agent["tools"] == ["calculate"]
    listed = (await client.get("/api/v1/agents", headers=headers)).json()["items"]
    slugs = [a["slug"] for a in listed]
    assert slugs[0] == "assistant" and "contract-reviewer" in slugs
    assistant = listed[0]
    assert assistant["builtin"] and assistant["tools"] is None and "Personal Agent" in assistant["instructions"]
    got = await client.get(f"/api/v1/agents/{agent['id']}", headers=headers)
    assert got.status_code == 200 and got.json()["name"] == "Contract reviewer"
    found = (await client.get("/api/v1/agents", params={"q": "contract"}, headers=headers)).json()["items"]
    assert [a["slug"] for a in found] == ["contract-reviewer"]


async def test_each_change_is_a_version_published_unless_asked_and_rolls_back(
    client: httpx.AsyncClient, make_tenant: Any
) -> None:
    alice = make_tenant()
    headers = auth_headers(alice)
    agent = await create(client, headers)
    url = f"/api/v1/agents/{agent['id']}"
    v2 = await client.patch(url, json={"instructions": "Version two."}, headers=headers)
    assert v2.status_code == 200, v2.text
    assert v2.json()["published_version"] == 2 and v2.json()["instructions"] == "Version two."
    draft = await client.patch(url, json={"instructions": "A draft.", "publish": False}, headers=headers)
    assert draft.json()["published_version"] == 2 and draft.json()["latest_version"] == 3
    assert draft.json()["instructions"] == "Version two."  # the published version is what the agent shows
    versions = (await client.get(f"{url}/versions", headers=headers)).json()["items"]
    assert [(v["version"], v["published"]) for v in versions] == [(3, False), (2, True), (1, False)]
    assert versions[0]["created_by"] == str(alice.user_id)
    three = (await client.get(f"{url}/versions/3", headers=headers)).json()
    assert three["config"]["instructions"] == "A draft."
    rolled = await client.post(f"{url}/versions/1/publish", headers=headers)
    assert rolled.status_code == 200 and rolled.json()["published_version"] == 1
    assert (await client.get(url, headers=headers)).json()["instructions"] == REVIEWER["instructions"]
    diff = (await client.get(f"{url}/versions/1/diff/3", headers=headers)).json()
    assert diff["changes"] == [{"field": "instructions", "a": REVIEWER["instructions"], "b": "A draft."}]
    assert (await client.get(f"{url}/versions/9", headers=headers)).json()["code"] == "agent_version_not_found"
    missing = await client.post(f"{url}/versions/9/publish", headers=headers)
    assert missing.status_code == 404 and missing.json()["code"] == "agent_version_not_found"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"tools": ["no_such_tool"]}, "unknown_tool"),
        ({"approval": {"no_such_tool": "always"}}, "unknown_tool"),
        ({"delegates": ["nobody-here"]}, "unknown_delegate"),
        ({"output_schema": {"type": "banana"}}, "invalid_output_schema"),
        ({"output_schema": {"type": "string"}}, "invalid_output_schema"),
        ({"output_schema": {"type": "object", "properties": {"a": 3}}}, "invalid_output_schema"),
        ({"slug": "Not A Slug"}, "invalid_input"),
        ({"starter_prompts": ["a"] * 7}, "invalid_input"),
    ],
)
async def test_bad_input_is_a_422_with_a_stable_code_and_stores_nothing(
    client: httpx.AsyncClient, make_tenant: Any, admin_url: str, body: dict[str, Any], code: str
) -> None:
    alice = make_tenant()
    headers = auth_headers(alice)
    response = await client.post("/api/v1/agents", json={**REVIEWER, **body}, headers=headers)
    assert response.status_code == 422, response.text
    assert response.json()["code"] == code
    assert await agent_count(admin_url, alice.org_id) <= 1  # at most the built-in assistant


async def test_a_taken_slug_and_a_bad_patch_are_422_and_change_nothing(
    client: httpx.AsyncClient, make_tenant: Any
) -> None:
    alice = make_tenant()
    headers = auth_headers(alice)
    agent = await create(client, headers)
    again = await client.post("/api/v1/agents", json=REVIEWER, headers=headers)
    assert again.status_code == 422 and again.json()["code"] == "slug_taken"
    other = await create(client, headers, slug="second")
    renamed = await client.patch(f"/api/v1/agents/{other['id']}", json={"slug": "contract-reviewer"}, headers=headers)
    assert renamed.status_code == 422 and renamed.json()["code"] == "slug_taken"
    bad = await client.patch(f"/api/v1/agents/{agent['id']}", json={"tools": ["nope"]}, headers=headers)
    assert bad.status_code == 422 and bad.json()["code"] == "unknown_tool"
    versions = (await client.get(f"/api/v1/agents/{agent['id']}/versions", headers=headers)).json()["items"]
    assert len(versions) == 1
    delegating = await client.patch(f"/api/v1/agents/{agent['id']}", json={"delegates": ["second"]}, headers=headers)
    assert delegating.status_code == 200 and delegating.json()["delegates"] == ["second"]
    itself = await client.patch(
        f"/api/v1/agents/{agent['id']}", json={"delegates": ["contract-reviewer"]}, headers=headers
    )
    assert itself.json()["code"] == "unknown_delegate"


async def test_sharing_needs_an_org_admin_and_private_agents_are_their_owners(
    client: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    alice = make_tenant()
    bob = colleague_of(admin_url, alice)
    alice_h, bob_h = auth_headers(alice), auth_headers(bob)
    shared = await client.post("/api/v1/agents", json={**REVIEWER, "visibility": "org"}, headers=alice_h)
    assert shared.status_code == 403 and shared.json()["code"] == "org_admin_required"
    private = await create(client, alice_h)
    for method, path in [
        ("GET", ""),
        ("PATCH", ""),
        ("DELETE", ""),
        ("GET", "/versions"),
        ("GET", "/versions/1"),
        ("POST", "/versions/1/publish"),
        ("GET", "/versions/1/diff/1"),
        ("GET", "/export"),
    ]:
        response = await client.request(
            method, f"/api/v1/agents/{private['id']}{path}", headers=bob_h, json={} if method == "PATCH" else None
        )
        assert response.status_code == 404 and response.json()["code"] == "agent_not_found", (method, path)
    assert "contract-reviewer" not in [
        a["slug"] for a in (await client.get("/api/v1/agents", headers=bob_h)).json()["items"]
    ]
    admin_h = auth_headers(alice, roles=("user", "org-admin"))
    made_shared = await client.patch(f"/api/v1/agents/{private['id']}", json={"visibility": "org"}, headers=admin_h)
    assert made_shared.status_code == 200 and made_shared.json()["visibility"] == "org"
    seen = await client.get(f"/api/v1/agents/{private['id']}", headers=bob_h)
    assert seen.status_code == 200 and seen.json()["editable"] is False
    edit = await client.patch(f"/api/v1/agents/{private['id']}", json={"name": "Mine now"}, headers=bob_h)
    assert edit.status_code == 403 and edit.json()["code"] == "not_agent_owner"
    builtin = (await client.get("/api/v1/agents", headers=bob_h)).json()["items"][0]
    gone = await client.delete(f"/api/v1/agents/{builtin['id']}", headers=admin_h)
    assert gone.status_code == 409 and gone.json()["code"] == "builtin_agent"
    deleted = await client.delete(f"/api/v1/agents/{private['id']}", headers=alice_h)
    assert deleted.status_code == 204
    assert (await client.get(f"/api/v1/agents/{private['id']}", headers=alice_h)).status_code == 404


async def test_another_orgs_agent_is_a_404(client: httpx.AsyncClient, make_tenant: Any) -> None:
    alice, mallory = make_tenant(), make_tenant(roles=("user", "org-admin"))
    agent = await create(client, auth_headers(alice))
    theirs = auth_headers(mallory, roles=("user", "org-admin"))
    for path in ("", "/versions", "/versions/1", "/export", "/versions/1/diff/1"):
        response = await client.get(f"/api/v1/agents/{agent['id']}{path}", headers=theirs)
        assert response.status_code == 404, path
    listed = (await client.get("/api/v1/agents", headers=theirs)).json()["items"]
    assert agent["id"] not in [a["id"] for a in listed]
    # the same slug is free in another org
    assert (await create(client, theirs))["slug"] == "contract-reviewer"


async def test_export_then_import_is_the_same_agent_and_unknown_tools_are_a_422(
    client: httpx.AsyncClient, make_tenant: Any
) -> None:
    alice, bob = make_tenant(), make_tenant()
    agent = await create(
        client, auth_headers(alice), output_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}}
    )
    document = (await client.get(f"/api/v1/agents/{agent['id']}/export", headers=auth_headers(alice))).json()
    assert document["format"] == "personal-agent.agent/v1" and "id" not in document and "owner_id" not in document
    imported = await client.post("/api/v1/agents/import", json={"document": document}, headers=auth_headers(bob))
    assert imported.status_code == 201, imported.text
    body = imported.json()
    for key in ("name", "instructions", "tools", "starter_prompts", "output_schema", "slug"):
        assert body[key] == agent[key], key
    lacking = {**document, "tools": ["calculate", "crm_lookup"]}
    refused = await client.post(
        "/api/v1/agents/import", json={"document": lacking, "slug": "other"}, headers=auth_headers(bob)
    )
    assert refused.status_code == 422 and refused.json()["code"] == "unknown_tool"
    assert refused.json()["message"] == "unknown tool 'crm_lookup'"


async def say_instructions_and_tools(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    """Answers with the instructions it was sent and the names of the tools it was offered."""
    tools = ",".join(sorted(t.name for t in info.function_tools))
    yield f"{info.instructions}|{tools}"


async def answer_of(
    http: httpx.AsyncClient, headers: dict[str, str], chat_id: str, model: str, message: str = "hello"
) -> tuple[str, str]:
    run = await start_run(http, headers, model, message, chat_id=chat_id)
    frames = await read_events(http, run["events_url"], headers)
    assert frames[-1].type == "RUN_FINISHED", frames[-1]
    return "".join(f.data["delta"] for f in frames if f.type == "TEXT_MESSAGE_CONTENT"), run["run_id"]


async def test_a_chat_bound_to_an_agent_runs_its_published_version(http: httpx.AsyncClient, make_tenant: Any) -> None:
    alice = make_tenant()
    headers = auth_headers(alice)
    agent = await create(
        http, headers, tools=["calculate", "current_time"], memory=False, classification="confidential"
    )
    chat = await http.post("/api/v1/chats", json={"agent": "contract-reviewer"}, headers=headers)
    assert chat.status_code == 201, chat.text
    assert chat.json()["agent_id"] == agent["id"] and chat.json()["classification"] == "confidential"
    with scripted_model(say_instructions_and_tools) as (model, _):
        text, run_id = await answer_of(http, headers, chat.json()["id"], model)
        assert text.startswith(REVIEWER["instructions"]) and text.endswith("|calculate,current_time")
        view = (await http.get(f"/api/v1/runs/{run_id}", headers=headers)).json()
        assert view["agent"] == {"id": agent["id"], "slug": "contract-reviewer", "version": 1}
        await http.patch(f"/api/v1/agents/{agent['id']}", json={"instructions": "Second."}, headers=headers)
        text, run_id = await answer_of(http, headers, chat.json()["id"], model)
        assert text.startswith("Second.|")
        assert (await http.get(f"/api/v1/runs/{run_id}", headers=headers)).json()["agent"]["version"] == 2
        await http.post(f"/api/v1/agents/{agent['id']}/versions/1/publish", headers=headers)
        text, _ = await answer_of(http, headers, chat.json()["id"], model)
        assert text.startswith(REVIEWER["instructions"])
        plain = await http.post("/api/v1/chats", json={}, headers=headers)
        text, run_id = await answer_of(http, headers, plain.json()["id"], model)
        assert text.startswith("You are Personal Agent") and "remember" in text
        assert (await http.get(f"/api/v1/runs/{run_id}", headers=headers)).json()["agent"]["slug"] == "assistant"


async def test_a_chat_cannot_bind_an_agent_the_user_cannot_see(
    client: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    alice = make_tenant()
    bob = colleague_of(admin_url, alice)
    await create(client, auth_headers(alice))
    refused = await client.post("/api/v1/chats", json={"agent": "contract-reviewer"}, headers=auth_headers(bob))
    assert refused.status_code == 404 and refused.json()["code"] == "agent_not_found"


PARENT = "You are the lead agent; hand research to the researcher."
HELPER = "You are the researcher agent."


async def lead_then_helper(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    """The lead delegates to `researcher` (or, asked to, to an agent it does not list), then repeats what came
    back; the researcher answers with its instructions."""
    if info.instructions and HELPER in info.instructions:
        yield f"researcher says: {info.instructions[:40]}"
        return
    if tool_rounds(messages) == 0:
        target = "stranger" if "stranger" in str(messages[-1]) else "researcher"
        args = json.dumps({"task": "find the clause", "agent": target})
        yield {0: DeltaToolCall(name="delegate", json_args=args, tool_call_id="d1")}
        return
    returned = [
        p.content
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart | RetryPromptPart)
    ]
    yield f"lead heard: {returned[-1]}"


async def test_delegate_runs_a_listed_agent_and_usage_groups_by_agent(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    alice = make_tenant()
    headers = auth_headers(alice)
    await create(http, headers, slug="researcher", name="Researcher", instructions=HELPER, tools=["current_time"])
    await create(
        http,
        headers,
        slug="lead",
        name="Lead",
        instructions=PARENT,
        tools=["delegate", "current_time"],
        delegates=["researcher"],
    )
    chat = (await http.post("/api/v1/chats", json={"agent": "lead"}, headers=headers)).json()
    with scripted_model(lead_then_helper) as (model, _):
        text, run_id = await answer_of(http, headers, chat["id"], model)
        assert text == f"lead heard: researcher says: {HELPER[:40]}"
        view = (await http.get(f"/api/v1/runs/{run_id}", headers=headers)).json()
        (child,) = view["children"]
        child_view = (await http.get(f"/api/v1/runs/{child['id']}", headers=headers)).json()
        assert child_view["agent"]["slug"] == "researcher" and child_view["agent"]["version"] == 1
        assert [t["name"] for t in child_view["tools"]] == ["current_time"]
        other = (await http.post("/api/v1/chats", json={"agent": "lead"}, headers=headers)).json()
        refused, _ = await answer_of(http, headers, other["id"], model, message="ask the stranger")
        assert "'stranger' is not one of this agent's delegates (researcher)" in refused
    usage = await http.get("/api/v1/usage", params={"group_by": "agent"}, headers=headers)
    assert usage.status_code == 200, usage.text
    keys = {item["key"]: item["requests"] for item in usage.json()["items"]}
    assert keys.get("lead", 0) >= 4 and keys.get("researcher") == 1, keys


async def test_a_draft_version_can_be_tried_without_publishing(http: httpx.AsyncClient, make_tenant: Any) -> None:
    alice = make_tenant()
    headers = auth_headers(alice)
    agent = await create(http, headers, tools=["current_time"])
    draft = await http.patch(
        f"/api/v1/agents/{agent['id']}", json={"instructions": "Draft only.", "publish": False}, headers=headers
    )
    assert draft.json()["published_version"] == 1 and draft.json()["latest_version"] == 2
    chat = (await http.post("/api/v1/chats", json={"agent": "contract-reviewer"}, headers=headers)).json()
    with scripted_model(say_instructions_and_tools) as (model, _):
        tried = await http.post(
            f"/api/v1/chats/{chat['id']}/runs",
            json={"message": "try", "model": model, "mode": "inline", "agent_version": 2},
            headers=headers,
        )
        assert tried.status_code == 202, tried.text
        frames = await read_events(http, tried.json()["events_url"], headers)
        assert "".join(f.data["delta"] for f in frames if f.type == "TEXT_MESSAGE_CONTENT").startswith("Draft only.|")
        view = (await http.get(f"/api/v1/runs/{tried.json()['run_id']}", headers=headers)).json()
        assert view["agent"]["version"] == 2
        text, _ = await answer_of(http, headers, chat["id"], model)
        assert text.startswith(REVIEWER["instructions"])  # the published version is still 1
        missing = await http.post(
            f"/api/v1/chats/{chat['id']}/runs",
            json={"message": "try", "model": model, "mode": "inline", "agent_version": 9},
            headers=headers,
        )
        assert missing.status_code == 404 and missing.json()["code"] == "agent_version_not_found"


HANDBOOK = "# Travel\n\nTrain tickets over two hundred euros need the manager's approval.\n"
DIARY = "Personal note: the train to the quarterly review leaves on a Thursday.\n"


async def search_then_name_documents(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    """Searches the knowledge base once, then answers with the documents its passages came from."""
    if tool_rounds(messages) == 0:
        args = json.dumps({"query": "train tickets quarterly review Thursday approval"})
        yield {0: DeltaToolCall(name="search_knowledge", json_args=args, tool_call_id="k1")}
        return
    (found,) = [
        p.content for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)
    ]
    yield ",".join(sorted({item["document"] for item in found if "document" in item}))


async def test_an_agents_knowledge_names_the_one_collection_it_searches(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    from tests.knowledge import upload_and_wait

    alice = make_tenant()
    headers = auth_headers(alice)
    await upload_and_wait(http, headers, alice, "handbook.md", "text/markdown", HANDBOOK.encode())
    await upload_and_wait(http, headers, alice, "diary.txt", "text/plain", DIARY.encode(), collection="personal")
    await create(http, headers, slug="own-notes", name="Own notes", tools=["search_knowledge"], knowledge=["personal"])
    await create(http, headers, slug="handbook", name="Handbook", tools=["search_knowledge"], knowledge=["org"])
    await create(http, headers, slug="everything", name="All", tools=["search_knowledge"], knowledge=[])
    with scripted_model(search_then_name_documents) as (model, _):
        seen = {}
        for slug in ("own-notes", "handbook", "everything"):
            chat = (await http.post("/api/v1/chats", json={"agent": slug}, headers=headers)).json()
            seen[slug], _ = await answer_of(http, headers, chat["id"], model)
    assert seen == {"own-notes": "diary.txt", "handbook": "handbook.md", "everything": "diary.txt,handbook.md"}


async def test_a_fresh_orgs_first_requests_at_once_share_one_builtin_assistant(
    client: httpx.AsyncClient, make_tenant: Any
) -> None:
    """Each of a fresh org's first requests finds no built-in assistant and creates it; the ones that lose the race
    read the winner's (before: 409 `slug_taken` for them, seen as failed first runs when a new tenant's clients start
    together)."""
    headers = auth_headers(make_tenant())
    answers = await asyncio.gather(*(client.get("/api/v1/agents", headers=headers) for _ in range(8)))
    assert [a.status_code for a in answers] == [200] * 8, [a.text for a in answers if a.status_code != 200]
    ids = {a.json()["items"][0]["id"] for a in answers}
    assert len(ids) == 1 and all(a.json()["items"][0]["builtin"] for a in answers)
