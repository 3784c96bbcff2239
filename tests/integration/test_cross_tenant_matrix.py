"""Cross-tenant matrix, generated from the app's OpenAPI document so new routes are covered unedited.

Org A creates one real resource per path-parameter kind through the API (FACTORIES). Then, for every
operation under /api/v1:
- with no credentials it is 401 (unless listed in PUBLIC);
- if it takes a path parameter, a user of org B gets 404 for org A's resource (SSE routes answer 404
  before any stream starts), and org A's resources are intact afterwards;
- if it is a JSON list (GET without path parameters), org B's response never contains org A's ids.

A route whose path parameter has no factory fails loudly: add one to FACTORIES (or, for a parameter
that names no tenant data, to NOT_TENANT_DATA with the reason).
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from personal_agent.local.dev_app import create_dev_app
from tests.auth import bearer, dev_issuer
from tests.feed import my_feed
from tests.push_browser import BrowserKeys

API_PREFIX = "/api/v1/"
# Operations anyone may call: they authenticate the caller some other way (signed webhooks verify
# their own signatures) or hand out dev tokens (local mode only). Matched by operationId or path prefix.
PUBLIC = {
    "dev_login",
    "client_config",  # how to sign in (issuer, client id, whether dev login exists): needed before signing in
    "view_share",  # a public share link opens without signing in (an org link still needs a member: tested apart)
    "download_shared_attachment",  # a public link's files too (the share's audience decides, as for view_share)
}
# Reads whose ids the factories cannot make belong together, with what org A gets instead of 200: the matrix's
# share froze its chat before its file was sent, so the file is not the snapshot's (the 200 is tested over pa dev,
# tests/e2e/test_dev_server_sharing.py::test_a_share_shows_its_citations_and_opens_its_files).
UNRELATED_IDS = {"download_shared_attachment": (404, "attachment_not_found")}
# Channels' inbound endpoints verify each request with the channel's own signature or secret token.
PUBLIC_PREFIXES = ("/api/v1/hooks/", "/api/v1/dev/", "/api/v1/channels/")
# Path parameters that name no tenant-owned row, with the reason.
NOT_TENANT_DATA = {
    "agent": "an agent name; AG-UI threads are scoped by the caller's org in the request body",
    "version": "a version number of the agent named beside it",
    "a": "a version number of the agent named beside it",
    "b": "a version number of the agent named beside it",
    "kind": "a channel kind (slack, telegram, email): the channel row is the caller's org's, from the token",
    "external_id": "a channel account id: looked up among the caller's own channel links only",
}
# The value sent for such a parameter when "default" would not parse (an agent's version numbers).
NOT_TENANT_VALUES = {"version": "1", "a": "1", "b": "1"}
# Platform-admin routes act across every org by design (there is no tenant boundary to cross): an org
# admin gets 403 `role_required` there (checked below), a platform admin may act on any user.
PLATFORM_PREFIXES = ("/api/v1/platform/",)
# Request bodies where the schema-derived example is not enough (by operationId).
EXAMPLE_BODIES: dict[str, Any] = {
    "start_run": {"message": "hi", "mode": "inline"},
    "stream_run": {"message": "hi", "mode": "inline"},
    "create_attachment": {"filename": "m.png", "content_type": "image/png", "size": 10},
    "add_project_member": {"email": "nobody@example.test", "role": "viewer"},
    "add_eval_case_from_run": {"input": "email bob", "expected": "sent"},
    "create_eval_case_file": {"filename": "m.csv", "content_type": "text/csv", "size": 8},
}
REQUEST_TIMEOUT = 30.0


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    operation_id: str
    spec: dict[str, Any] = field(compare=False, repr=False)

    @property
    def path_params(self) -> list[str]:
        return re.findall(r"{([^}]+)}", self.path)

    @property
    def streams(self) -> bool:
        content = self.spec.get("responses", {}).get("200", {}).get("content", {})
        return "text/event-stream" in content

    @property
    def public(self) -> bool:
        return self.operation_id in PUBLIC or self.path.startswith(PUBLIC_PREFIXES)

    def __str__(self) -> str:
        return f"{self.method} {self.path}"


def _load_spec() -> dict[str, Any]:
    return create_dev_app().openapi()


SPEC = _load_spec()
OPERATIONS = sorted(
    (
        Operation(method.upper(), path, op.get("operationId", f"{method} {path}"), op)
        for path, ops in SPEC["paths"].items()
        if path.startswith(API_PREFIX)
        for method, op in ops.items()
        if method in ("get", "post", "put", "patch", "delete")
    ),
    # Destructive calls go last, so a leak in them cannot hide a leak elsewhere.
    key=lambda o: (o.method == "DELETE", o.path, o.method),
)
PLATFORM = [o for o in OPERATIONS if o.path.startswith(PLATFORM_PREFIXES)]
WITH_IDS = [
    o for o in OPERATIONS if not o.public and o not in PLATFORM and any(p not in NOT_TENANT_DATA for p in o.path_params)
]
# Streaming lists (the per-user feed) start at "now" and never end, so they are not read here; the feed's
# stream key is built from the caller's org and user (bus/key_names.py).
# GETs without path parameters that are not lists, with the reason.
NOT_LISTS = {
    "install_slack_channel": "a redirect to Slack's authorize page for the caller's own org (409 without a Slack app)",
    "compare_eval_runs": "two evaluation runs named in the query: org B naming org A's runs is in the 404 matrix below",
}
LISTS = [
    o
    for o in OPERATIONS
    if o.method == "GET" and not o.public and not o.path_params and not o.streams and o.operation_id not in NOT_LISTS
]


# --- example values from JSON schema -------------------------------------------------------------


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = SPEC["components"]["schemas"][name]
    return schema


def example(schema: dict[str, Any]) -> Any:
    """A small value that satisfies `schema` (required fields only)."""
    schema = _resolve(schema)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if _resolve(s).get("type") != "null"]
            return example(options[0]) if options else None
    if "allOf" in schema:
        return example(schema["allOf"][0])
    kind = schema.get("type")
    if kind == "string":
        fmt = schema.get("format")
        if fmt == "uuid":
            return str(uuid.uuid4())
        if fmt == "date-time":
            return datetime.now(UTC).isoformat()
        return "x" * max(int(schema.get("minLength", 1)), 1)
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    if kind == "array":
        return [example(schema.get("items", {})) for _ in range(int(schema.get("minItems", 0)))]
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {name: example(props.get(name, {})) for name in schema.get("required", [])}
    return "x"


def body_for(op: Operation) -> Any:
    if op.operation_id in EXAMPLE_BODIES:
        return EXAMPLE_BODIES[op.operation_id]
    content = op.spec.get("requestBody", {}).get("content", {}).get("application/json")
    return example(content["schema"]) if content else None


def query_for(op: Operation) -> dict[str, Any]:
    return {
        p["name"]: example(p.get("schema", {}))
        for p in op.spec.get("parameters", [])
        if p["in"] == "query" and p.get("required")
    }


def query_variants(op: Operation) -> list[dict[str, Any]]:
    """The required query, then once per value of each optional enum parameter (`scope=org`...)."""
    base = query_for(op)
    variants = [base]
    for p in op.spec.get("parameters", []):
        schema = _resolve(p.get("schema", {}))
        if p["in"] == "query" and "enum" in schema:
            variants.extend({**base, p["name"]: value} for value in schema["enum"])
    return variants


# --- the two orgs and org A's resources ----------------------------------------------------------


@dataclass
class Org:
    slug: str
    headers: dict[str, str]
    ids: dict[str, str] = field(default_factory=dict)


@dataclass
class World:
    http: httpx.AsyncClient
    a: Org
    b: Org
    approval_model: str
    question_model: str = ""

    async def call(self, op: Operation, org: Org | None, ids: dict[str, str], query: dict[str, Any]) -> httpx.Response:
        url = op.path
        for name in op.path_params:
            url = url.replace("{" + name + "}", ids.get(name) or "default")
        body = body_for(op)
        request = self.http.request(
            op.method,
            url,
            params=query,
            json=body if body is not None else None,
            headers=org.headers if org else {},
        )
        # A wrongly opened stream would never end: fail instead of hanging.
        return await asyncio.wait_for(request, REQUEST_TIMEOUT)


Factory = Callable[[World], Awaitable[str]]


async def _post(world: World, url: str, body: dict[str, Any], key: str) -> str:
    response = await world.http.post(url, json=body, headers=world.a.headers)
    assert response.status_code in (200, 201, 202), f"factory POST {url}: {response.status_code} {response.text}"
    return str(response.json()[key])


async def _chat(world: World) -> str:
    return await _post(world, "/api/v1/chats", {"title": "x"}, "id")


async def _run(world: World) -> str:
    chat_id = await resource(world, "chat_id")
    return await _post(world, f"/api/v1/chats/{chat_id}/runs", {"message": "hi", "mode": "inline"}, "run_id")


async def _token(world: World) -> str:
    return await _post(world, "/api/v1/me/tokens", {"name": "matrix"}, "id")


APPROVAL_TOOL = "matrix_send_email"


@contextmanager
def _approval_kit() -> Iterator[str]:
    """A tool that needs approval and a scripted model that calls it; yields the model id."""
    from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, DeltaToolCall

    from personal_agent.tools.registry import ToolDef, register_tool, unregister_tool
    from tests.scripted import scripted_model

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        answered = any(isinstance(p, ToolReturnPart) for m in messages if isinstance(m, ModelRequest) for p in m.parts)
        if answered:
            yield "sent"
        else:
            yield {0: DeltaToolCall(name=APPROVAL_TOOL, json_args='{"to": "bob@example.com"}', tool_call_id="mail_1")}

    def send_email(to: str) -> str:
        return f"sent to {to}"

    register_tool(ToolDef(APPROVAL_TOOL, send_email, "Send an email.", acts=True, requires_approval=True))
    try:
        with scripted_model(script) as (model_id, _):
            yield model_id
    finally:
        unregister_tool(APPROVAL_TOOL)


@contextmanager
def _question_kit() -> Iterator[str]:
    """A scripted model that asks its person a question (`ask_user`) and waits; yields the model id."""
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.models.function import AgentInfo, DeltaToolCall

    from tests.scripted import scripted_model

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        yield {0: DeltaToolCall(name="ask_user", json_args='{"question": "Which city?"}', tool_call_id="ask_1")}

    with scripted_model(script) as (model_id, _):
        yield model_id


async def _approval(world: World) -> str:
    # No API route creates an approval: a real run asks for one. The run is launched through the same
    # launch code the API uses, because the API does not let a caller pick tools.
    from personal_agent.lifecycle.launch import LaunchRequest, launch_run
    from tests.sse import read_events

    chat_id = await _chat(world)  # a chat of its own: the run waits there, and a chat takes one run at a time
    a = world.a
    a.ids["approval_chat_id"] = chat_id
    spec = await launch_run(
        LaunchRequest(
            org_id=uuid.UUID(a.ids["org_id"]),
            user_id=uuid.UUID(a.ids["user_id"]),
            chat_id=uuid.UUID(chat_id),
            message="email bob",
            model=world.approval_model,
            tools=(APPROVAL_TOOL,),
        )
    )
    a.ids["approval_run_id"] = str(spec.run_id)
    frames: list[Any] = []
    while not any(f.data.get("name") == "approval_requested" for f in frames):
        assert not any(f.type in ("RUN_FINISHED", "RUN_ERROR") for f in frames), f"no approval requested: {frames}"
        frames = await read_events(world.http, f"/api/v1/runs/{spec.run_id}/events", a.headers, limit=len(frames) + 1)
    requested = next(f for f in frames if f.data.get("name") == "approval_requested")
    return str(requested.data["value"]["approval_id"])


async def _member(world: World) -> str:
    return world.a.ids["user_id"]  # org A's owner: a member since the world signed in


async def _workflow(world: World) -> str:
    return await _post(world, "/api/v1/workflows", {"name": "matrix"}, "id")


async def _key(world: World) -> str:
    return await _post(world, "/api/v1/keys", {"provider": "matrix", "key": "sk-matrix-key-123456"}, "id")


async def _provider(world: World) -> str:
    body = {
        "name": "matrix",
        "kind": "openai-compatible",
        "base_url": "http://127.0.0.1:9/v1",
        "trust_tier": 2,
        "key_id": await resource(world, "key_id"),
    }
    return await _post(world, "/api/v1/admin/providers", body, "id")


async def _model(world: World) -> str:
    provider_id = await resource(world, "provider_id")
    return await _post(world, f"/api/v1/admin/providers/{provider_id}/models", {"name": "matrix-1"}, "id")


async def _mcp_server(world: World) -> str:
    # Unreachable on purpose (discard port): discovery then answers `reachable: false`, still org-scoped.
    body = {"name": "matrix", "url": "http://127.0.0.1:9/mcp", "trust_tier": 1, "headers": {"X-Key": "matrix"}}
    return await _post(world, "/api/v1/admin/mcp-servers", body, "id")


async def _budget(world: World) -> str:
    response = await world.http.put(
        "/api/v1/admin/budgets", json={"scope": "org", "monthly_usd": "1000"}, headers=world.a.headers
    )
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


async def _document(world: World) -> str:
    """A document of org A's, uploaded through its presigned POST and ingested (its file can be downloaded)."""
    from tests.knowledge import post_file, wait_for_status

    data = b"# Matrix\n\nThe matrix document.\n"
    body = {"filename": "matrix.md", "content_type": "text/markdown", "size": len(data), "collection": "org"}
    response = await world.http.post("/api/v1/knowledge/documents", json=body, headers=world.a.headers)
    assert response.status_code == 201, f"factory POST documents: {response.status_code} {response.text}"
    sent = await asyncio.to_thread(post_file, response.json()["upload"], data)
    assert sent.status_code in (200, 204), sent.text
    document_id = str(response.json()["document"]["id"])
    await asyncio.to_thread(wait_for_status, world.a.ids["org_id"], world.a.ids["user_id"], document_id)
    return document_id


async def _collection(world: World) -> str:
    return await _post(world, "/api/v1/knowledge/collections", {"name": "Matrix collection"}, "id")


async def _source(world: World) -> str:
    # A bucket nobody made: its syncs record the listing's failure, the source stays org A's.
    body = {"kind": "s3", "collection": await resource(world, "collection_id"), "bucket": "matrix-missing"}
    return await _post(world, "/api/v1/knowledge/sources", body, "id")


async def _chunk(world: World) -> str:
    """A passage of org A's: a document uploaded through its presigned POST, ingested, then found by search."""
    from tests.knowledge import post_file, wait_for_status

    data = b"# Matrix\n\nThe matrix passage about lighthouse keepers.\n"
    body = {"filename": "chunk.md", "content_type": "text/markdown", "size": len(data), "collection": "org"}
    created = await world.http.post("/api/v1/knowledge/documents", json=body, headers=world.a.headers)
    assert created.status_code == 201, f"factory POST documents: {created.status_code} {created.text}"
    sent = await asyncio.to_thread(post_file, created.json()["upload"], data)
    assert sent.status_code in (200, 204), sent.text
    document_id = created.json()["document"]["id"]
    await asyncio.to_thread(wait_for_status, world.a.ids["org_id"], world.a.ids["user_id"], document_id)
    query = {"q": "lighthouse keepers"}
    found = await world.http.get("/api/v1/knowledge/search", params=query, headers=world.a.headers)
    assert found.status_code == 200 and found.json()["items"], f"factory search: {found.text}"
    return str(found.json()["items"][0]["chunk_id"])


async def _output(world: World) -> str:
    workflow_id = await resource(world, "workflow_id")
    body = {"kind": "email", "email": f"{world.a.slug}-owner@example.test"}  # a member's own address
    return await _post(world, f"/api/v1/workflows/{workflow_id}/outputs", body, "id")


async def _output_delivery(world: World) -> str:
    # A delivery is logged when a run of the workflow ends: test-fire it and wait for the log's row.
    workflow_id = await resource(world, "workflow_id")
    await resource(world, "output_id")
    feed = await my_feed(world.http, world.a.headers)
    try:
        fired = await world.http.post(f"/api/v1/workflows/{workflow_id}/test-fire", json={}, headers=world.a.headers)
        assert fired.status_code == 202, f"factory test-fire: {fired.status_code} {fired.text}"
        attempted = await asyncio.to_thread(feed.next, "output_delivery", lambda v: v["workflow_id"] == workflow_id)
    finally:
        feed.close()
    assert attempted is not None, "no output delivery was attempted for the test-fired run"
    return str(attempted["delivery_id"])


async def _memory(world: World) -> str:
    return await _post(world, "/api/v1/me/memories", {"text": "matrix memory"}, "id")


async def _push_subscription(world: World) -> str:
    body = BrowserKeys().subscription(f"https://push.example.com/matrix/{uuid.uuid4().hex}")
    return await _post(world, "/api/v1/push/subscriptions", body, "id")


async def _agent(world: World) -> str:
    body = {"name": "Matrix agent", "slug": "matrix-agent", "instructions": "Answer briefly.", "tools": ["calculate"]}
    return await _post(world, "/api/v1/agents", body, "id")


async def _agent_slug(world: World) -> str:
    """Org A's agent by its slug (an agent's online sampling is set by slug)."""
    await resource(world, "agent_id")
    return "matrix-agent"


async def _attachment(world: World) -> str:
    """An image uploaded to its chat (the browser's form POST straight to the bucket), so its owner can fetch it."""
    chat_id = await resource(world, "chat_id")
    body = {"filename": "matrix.png", "content_type": "image/png", "size": 10}
    created = await world.http.post(f"/api/v1/chats/{chat_id}/attachments", json=body, headers=world.a.headers)
    assert created.status_code == 201, created.text
    form = created.json()["upload"]
    async with httpx.AsyncClient() as s3:
        posted = await s3.post(
            form["url"], data=form["fields"], files={"file": ("m.png", b"\x89PNG\r\n\x1a\n00", "image/png")}
        )
    assert posted.status_code in (200, 201, 204), posted.text
    return str(created.json()["id"])


async def _rule(world: World) -> str:
    body = {"tool": "calculate", "when": "true", "effect": "allow", "reason": "matrix"}
    return await _post(world, "/api/v1/admin/tool-policies", body, "id")


async def _share(world: World) -> str:
    chat_id = await resource(world, "chat_id")
    created = await world.http.post(f"/api/v1/chats/{chat_id}/shares", json={}, headers=world.a.headers)
    assert created.status_code == 201, created.text
    world.a.ids["token"] = created.json()["token"]
    return str(created.json()["id"])


async def _share_token(world: World) -> str:
    await resource(world, "share_id")
    return world.a.ids["token"]


async def _export(world: World) -> str:
    """A data export of org A's user (202: it is built in the background)."""
    return await _post(world, "/api/v1/me/export", {}, "id")


async def _org_export(world: World) -> str:
    """An export of org A, started by its admin."""
    return await _post(world, "/api/v1/admin/export", {}, "id")


async def _project(world: World) -> str:
    return await _post(world, "/api/v1/projects", {"name": "Matrix project", "instructions": "matrix"}, "id")


async def _dataset(world: World) -> str:
    body = {"name": "matrix", "cases": [{"input": "email bob", "expected": "sent"}]}
    return await _post(world, "/api/v1/evals/datasets", body, "id")


async def _case(world: World) -> str:
    """The dataset's case (the dataset is made with one)."""
    dataset = await resource(world, "dataset_id")
    detail = await world.http.get(f"/api/v1/evals/datasets/{dataset}", headers=world.a.headers)
    assert detail.status_code == 200, detail.text
    return str(detail.json()["items"][0]["id"])


async def _case_file(world: World) -> str:
    """A CSV of the case, uploaded through its presigned POST like a chat attachment."""
    dataset, case = await resource(world, "dataset_id"), await resource(world, "case_id")
    body = {"filename": "matrix.csv", "content_type": "text/csv", "size": 8}
    created = await world.http.post(
        f"/api/v1/evals/datasets/{dataset}/cases/{case}/files", json=body, headers=world.a.headers
    )
    assert created.status_code == 201, created.text
    form = created.json()["upload"]
    async with httpx.AsyncClient() as s3:
        posted = await s3.post(form["url"], data=form["fields"], files={"file": ("m.csv", b"a,b\n1,2\n", "text/csv")})
    assert posted.status_code in (200, 201, 204), posted.text
    return str(created.json()["id"])


async def _eval_run(world: World) -> str:
    dataset = await resource(world, "dataset_id")
    body = {"dataset": dataset, "model": world.approval_model, "budget_usd": 1, "scorers": [{"kind": "contains"}]}
    return await _post(world, "/api/v1/evals/runs", body, "id")


async def _followup(world: World) -> str:
    """A message queued behind the run that waits for an approval in its chat."""
    await resource(world, "approval_id")
    chat_id = world.a.ids["approval_chat_id"]
    queued = await world.http.post(f"/api/v1/chats/{chat_id}/runs", json={"message": "later"}, headers=world.a.headers)
    assert queued.status_code == 202 and queued.json()["code"] == "followup_queued", queued.text
    return str(queued.json()["details"]["followup_id"])


async def _question(world: World) -> str:
    """A question a run of org A waits on: its approval run's chat takes one run at a time, so a chat of its own."""
    from personal_agent.lifecycle.launch import LaunchRequest, launch_run
    from tests.sse import read_events

    chat_id = await _chat(world)
    a = world.a
    spec = await launch_run(
        LaunchRequest(
            org_id=uuid.UUID(a.ids["org_id"]),
            user_id=uuid.UUID(a.ids["user_id"]),
            chat_id=uuid.UUID(chat_id),
            message="ask me",
            model=world.question_model,
            tools=("ask_user",),
        )
    )
    a.ids["question_run_id"] = str(spec.run_id)
    frames: list[Any] = []
    while not any(f.data.get("name") == "question_asked" for f in frames):
        assert not any(f.type in ("RUN_FINISHED", "RUN_ERROR") for f in frames), f"no question asked: {frames}"
        frames = await read_events(world.http, f"/api/v1/runs/{spec.run_id}/events", a.headers, limit=len(frames) + 1)
    asked = next(f for f in frames if f.data.get("name") == "question_asked")
    return str(asked.data["value"]["question_id"])


FACTORIES: dict[str, Factory] = {
    "key_id": _key,
    "provider_id": _provider,
    "model_id": _model,
    "budget_id": _budget,
    "server_id": _mcp_server,
    "chat_id": _chat,
    "run_id": _run,
    "token_id": _token,
    "approval_id": _approval,
    "workflow_id": _workflow,
    "output_id": _output,
    "output_delivery_id": _output_delivery,
    "user_id": _member,
    "memory_id": _memory,
    "subscription_id": _push_subscription,
    "attachment_id": _attachment,
    "document_id": _document,
    "chunk_id": _chunk,
    "collection_id": _collection,
    "source_id": _source,
    "agent_id": _agent,
    "slug": _agent_slug,
    "rule_id": _rule,
    "share_id": _share,
    "token": _share_token,
    "project_id": _project,
    "export_id": _export,
    "org_export_id": _org_export,
    "dataset_id": _dataset,
    "case_id": _case,
    "file_id": _case_file,
    "eval_run_id": _eval_run,
    "followup_id": _followup,
    "question_id": _question,
}


async def resource(world: World, name: str) -> str:
    """Org A's resource for a path parameter, created through the API on first use."""
    if name not in world.a.ids:
        if name in NOT_TENANT_DATA:
            return NOT_TENANT_VALUES.get(name, "default")
        factory = FACTORIES.get(name)
        assert factory is not None, (
            f"path parameter {{{name}}} has no factory: add one to FACTORIES in {__name__} "
            "(or to NOT_TENANT_DATA with the reason it names no tenant data)"
        )
        world.a.ids[name] = await factory(world)
    return world.a.ids[name]


def _org(label: str) -> Org:
    slug = f"matrix-{label}-{uuid.uuid4().hex[:8]}"
    # Org admins: the strongest role inside one org, so admin-only routes are in the matrix too.
    email = f"{slug}-owner@example.test"  # e-mail outputs go to members' own addresses
    token = dev_issuer().mint(subject=f"{slug}-owner", orgs=[slug], roles=["org-admin"], email=email)
    return Org(slug, bearer(token))


@pytest.fixture(scope="module")
async def world(live_url: str) -> AsyncIterator[World]:
    """Orgs A and B on the live dev server (a real HTTP server, so SSE routes are exercised for real)."""
    with ExitStack() as scripted:
        approval_model = scripted.enter_context(_approval_kit())
        question_model = scripted.enter_context(_question_kit())
        async with httpx.AsyncClient(base_url=live_url, timeout=REQUEST_TIMEOUT) as http:
            w = World(http, _org("a"), _org("b"), approval_model, question_model)
            for org in (w.a, w.b):  # sign in once: creates the user, the org and the membership
                me = await http.get("/api/v1/me", headers=org.headers)
                assert me.status_code == 200, me.text
                org.ids["org_id"], org.ids["user_id"] = me.json()["org"]["id"], me.json()["user_id"]
            try:
                yield w
            finally:
                # Stop org A's durable run that waits for an approval, so nothing outlives the module.
                if "followup_id" in w.a.ids:  # queued behind the approval run: it must not start when that ends
                    chat, followup = w.a.ids["approval_chat_id"], w.a.ids["followup_id"]
                    await http.delete(f"/api/v1/chats/{chat}/followups/{followup}", headers=w.a.headers)
                for waiting in ("approval_run_id", "question_run_id"):
                    if waiting in w.a.ids:
                        await http.post(f"/api/v1/runs/{w.a.ids[waiting]}/cancel", headers=w.a.headers)


def _a_markers(world: World) -> list[str]:
    return [world.a.slug, *world.a.ids.values()]


# --- the matrix -----------------------------------------------------------------------------------


def test_the_matrix_sees_the_api() -> None:
    assert WITH_IDS and LISTS, "no /api/v1 routes found in the OpenAPI document"
    unknown = {p for o in WITH_IDS for p in o.path_params if p not in FACTORIES and p not in NOT_TENANT_DATA}
    assert not unknown, f"path parameters without a factory: {sorted(unknown)} (add them to FACTORIES)"


@pytest.mark.parametrize("op", [o for o in OPERATIONS if not o.public], ids=str)
async def test_every_route_needs_credentials(world: World, op: Operation) -> None:
    ids = {name: str(uuid.uuid4()) for name in op.path_params}
    response = await world.call(op, None, ids, query_for(op))
    assert response.status_code == 401, f"{op} without credentials: {response.status_code} {response.text[:200]}"
    assert response.json()["code"] in ("missing_token", "unauthorized")


@pytest.mark.parametrize("op", WITH_IDS, ids=str)
async def test_org_b_gets_404_for_org_a_resources(world: World, op: Operation) -> None:
    ids = {name: await resource(world, name) for name in op.path_params}
    response = await world.call(op, world.b, ids, query_for(op))
    assert response.status_code == 404, f"{op} as org B on org A's ids: {response.status_code} {response.text[:300]}"
    assert not response.headers.get("content-type", "").startswith("text/event-stream")
    assert isinstance(response.json().get("code"), str)
    for marker in _a_markers(world):
        assert marker not in response.text


@pytest.mark.parametrize("op", PLATFORM, ids=str)
async def test_platform_routes_refuse_org_admins(world: World, op: Operation) -> None:
    ids = {name: await resource(world, name) for name in op.path_params}
    response = await world.call(op, world.b, ids, query_for(op))
    assert (response.status_code, response.json()["code"]) == (403, "role_required"), f"{op} as org B's admin"


@pytest.mark.parametrize("op", LISTS, ids=str)
async def test_org_b_lists_never_show_org_a_items(world: World, op: Operation) -> None:
    for name in FACTORIES:  # org A has one of everything before B looks
        await resource(world, name)
    for query in query_variants(op):
        response = await world.call(op, world.b, {}, query)
        assert response.status_code in (200, 403), f"{op} {query} as org B: {response.status_code} {response.text}"
        leaked = [m for m in _a_markers(world) if m in response.text]
        assert not leaked, f"{op} {query} shows org A's {leaked} to org B"


async def test_org_a_lists_do_show_its_items(world: World) -> None:
    """The list check has teeth: the same calls as org A do return org A's ids."""
    seen = ""
    for op in LISTS:
        for query in query_variants(op):
            seen += (await world.call(op, world.a, {}, query)).text
    shown = [name for name, value in world.a.ids.items() if name in FACTORIES and value in seen]
    assert shown, "none of org A's resources appear in any list route as org A"


async def test_org_a_resources_survive_org_b(world: World) -> None:
    """Runs after the matrix: org B's PATCH/POST/DELETE attempts changed nothing of org A's."""
    for op in WITH_IDS:
        if op.method != "GET" or op.streams:
            continue
        ids = {name: await resource(world, name) for name in op.path_params}
        response = await world.call(op, world.a, ids, query_for(op))
        if op.operation_id in UNRELATED_IDS:
            got = (response.status_code, response.json().get("code"))
            assert got == UNRELATED_IDS[op.operation_id], f"{op} as org A after the matrix: {response.text}"
            continue
        assert response.status_code == 200, f"{op} as org A after the matrix: {response.status_code} {response.text}"
