"""Bad input gets a 4xx with a stable code and nothing is stored — never a 500 (issue 12, item 10).

Against the dev app in-process, with the embedded Postgres, Valkey and moto."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import psycopg

from personal_agent.workflows.webhooks import MAX_BODY_BYTES
from tests.auth import auth_headers

LAMBDA_RESPONSE_LIMIT = 6 * 1024 * 1024
# The documented limits (api/approvals.py, workflows/webhooks.py), spelled out so this file reads the same
# against code that does not have them yet.
MAX_ARGUMENTS_BYTES = 64 * 1024
MAX_ARGUMENTS_DEPTH = 32
MAX_JSON_DEPTH = 64


def db_rows(admin_url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(admin_url) as conn:
        return conn.execute(sql, list(params)).fetchall()


def count(admin_url: str, sql: str, *params: Any) -> int:
    return int(db_rows(admin_url, sql, *params)[0][0])


async def test_schedules_too_long_to_compute_or_with_non_ascii_digits_are_422_and_not_stored(
    client: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    bad = (
        "rate(99999999999 days)",  # past the last date Python can represent
        "rate(3651 days)",  # over the ten-year cap
        "rate(٣ minutes)",  # an Arabic-Indic three: `\d` matches it, EventBridge does not
        "cron(² * * * ? *)",  # `str.isdigit` takes a superscript two, `int` does not
    )
    for expression in bad:
        response = await client.post(
            "/api/v1/workflows", json={"name": "nightly", "schedule": {"expression": expression}}, headers=headers
        )
        assert response.status_code == 422, (expression, response.text)
        assert response.json()["code"] == "invalid_schedule_expression"
    assert count(admin_url, "SELECT count(*) FROM workflows WHERE org_id = %s", tenant.org_id) == 0

    created = await client.post("/api/v1/workflows", json={"name": "nightly"}, headers=headers)
    assert created.status_code == 201, created.text
    patched = await client.patch(
        f"/api/v1/workflows/{created.json()['id']}",
        json={"schedule": {"expression": "rate(999999999999 minutes)"}},
        headers=headers,
    )
    assert (patched.status_code, patched.json()["code"]) == (422, "invalid_schedule_expression")
    assert count(admin_url, "SELECT count(*) FROM workflow_schedules WHERE org_id = %s", tenant.org_id) == 0


async def test_deeply_nested_webhook_json_is_422_and_nothing_is_stored(
    client: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    created = await client.post(
        "/api/v1/workflows",
        json={"name": "ci", "prompt_template": "Build {{body.build}} failed", "bearer_token": True},
        headers=headers,
    )
    assert created.status_code == 201, created.text
    workflow = created.json()
    sender = {"authorization": f"Bearer {workflow['bearer_token']}", "content-type": "application/json"}
    deep_array = "[" * 5000 + "]" * 5000  # 10 KB: under the size limit, far past the parser's recursion limit
    deep_object = '{"build": ' * (MAX_JSON_DEPTH + 1) + "1" + "}" * (MAX_JSON_DEPTH + 1)
    assert len(deep_array) < MAX_BODY_BYTES
    for body in (deep_array, deep_object):
        response = await client.post(f"/api/v1/hooks/{workflow['id']}", content=body.encode(), headers=sender)
        assert response.status_code == 422, response.text
        assert response.json()["code"] == "body_too_deep"
    assert count(admin_url, "SELECT count(*) FROM workflow_deliveries WHERE workflow_id = %s", workflow["id"]) == 0
    assert count(admin_url, "SELECT count(*) FROM runs WHERE chat_id = %s", workflow["chat_id"]) == 0


def _pending_approval(admin_url: str, tenant: Any) -> uuid.UUID:
    """A run of `tenant`'s user waiting on one tool call, made directly in the database."""
    run_id, approval_id = uuid.uuid4(), uuid.uuid4()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        chat = conn.execute(
            "INSERT INTO chats (org_id, user_id, title) VALUES (%s, %s, 'approvals') RETURNING id",
            [tenant.org_id, tenant.user_id],
        ).fetchone()
        assert chat is not None
        conn.execute(
            "INSERT INTO runs (id, org_id, chat_id, user_id, status, mode, spec)"
            " VALUES (%s, %s, %s, %s, 'waiting', 'inline', '{}')",
            [run_id, tenant.org_id, chat[0], tenant.user_id],
        )
        conn.execute(
            "INSERT INTO approvals (id, org_id, run_id, chat_id, owner_id, checkpoint_seq, tool_call_id, tool_name,"
            " args, expires_at) VALUES (%s, %s, %s, %s, %s, 1, 'call-1', 'send_email', %s, now() + interval '1 hour')",
            [approval_id, tenant.org_id, run_id, chat[0], tenant.user_id, json.dumps({"to": "a@example.com"})],
        )
    return approval_id


async def test_oversized_or_deeply_nested_approval_arguments_are_refused_and_nothing_is_stored(
    client: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    approval_id = _pending_approval(admin_url, tenant)
    deep: dict[str, Any] = {"to": "a@example.com"}
    for _ in range(MAX_ARGUMENTS_DEPTH + 5):
        deep = {"nested": deep}
    cases = (
        ({"to": "a@example.com", "body": "x" * (MAX_ARGUMENTS_BYTES + 1)}, 413, "arguments_too_large"),
        (deep, 422, "arguments_too_deep"),
    )
    for arguments, status, code in cases:
        response = await client.post(
            f"/api/v1/approvals/{approval_id}",
            json={"decision": "approve", "arguments": arguments},
            headers=auth_headers(tenant),
        )
        assert (response.status_code, response.json()["code"]) == (status, code), response.text
    row = db_rows(admin_url, "SELECT status, edited_args FROM approvals WHERE id = %s", approval_id)[0]
    assert row == ("pending", None)
    assert count(admin_url, "SELECT count(*) FROM approval_audit WHERE approval_id = %s", approval_id) == 0


async def test_text_with_a_nul_character_is_422_and_nothing_is_stored(
    client: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    response = await client.post("/api/v1/chats", json={"title": "trip\u0000plans"}, headers=headers)
    assert (response.status_code, response.json()["code"]) == (422, "invalid_text"), response.text
    assert count(admin_url, "SELECT count(*) FROM chats WHERE user_id = %s", tenant.user_id) == 0

    chat = (await client.post("/api/v1/chats", json={}, headers=headers)).json()
    response = await client.post(f"/api/v1/chats/{chat['id']}/runs", json={"message": "hi\u0000"}, headers=headers)
    assert (response.status_code, response.json()["code"]) == (422, "invalid_text"), response.text
    assert count(admin_url, "SELECT count(*) FROM runs WHERE chat_id = %s", chat["id"]) == 0
    assert count(admin_url, "SELECT count(*) FROM messages WHERE chat_id = %s", chat["id"]) == 0


def _store_messages(admin_url: str, tenant: Any, chat_id: str, texts: list[str]) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn, conn.cursor() as cur:
        cur.executemany(  # one branch: each message continues from the one before (0021)
            "INSERT INTO messages (org_id, chat_id, kind, message, parent_id) VALUES (%s, %s, 'request', %s,"
            " (SELECT max(m.id) FROM messages m WHERE m.chat_id = %s))",
            [
                (
                    tenant.org_id,
                    chat_id,
                    json.dumps({"kind": "request", "parts": [{"part_kind": "user-prompt", "content": t}]}),
                    chat_id,
                )
                for t in texts
            ],
        )


async def _all_pages(client: httpx.AsyncClient, chat_id: str, headers: dict[str, str]) -> list[list[dict[str, Any]]]:
    """Every page of the transcript, newest first, each checked against Lambda's response limit."""
    pages: list[list[dict[str, Any]]] = []
    cursor: str | None = None
    while True:
        params = {"cursor": cursor} if cursor else {}
        response = await client.get(f"/api/v1/chats/{chat_id}/messages", params=params, headers=headers)
        assert response.status_code == 200, response.text
        assert len(response.content) < LAMBDA_RESPONSE_LIMIT
        body = response.json()
        pages.append(body["items"])
        cursor = body["next_cursor"]
        if cursor is None:
            return pages


async def test_a_transcript_over_lambdas_6_mb_response_limit_comes_in_pages_under_it(
    client: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    chat = (await client.post("/api/v1/chats", json={"title": "long"}, headers=headers)).json()
    texts = [f"{i:03d}" + chr(0x41 + i % 26) * 200_000 for i in range(40)]  # 8 MB in 40 turns
    _store_messages(admin_url, tenant, chat["id"], texts)

    pages = await _all_pages(client, chat["id"], headers)

    assert len(pages) > 1
    items = [item for page in reversed(pages) for item in page]  # pages go back in time; items within run forward
    assert [item["text"] for item in items] == texts
    assert not any(item.get("truncated") for item in items)


async def test_a_single_message_too_large_for_one_response_is_cut_and_marked(
    client: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    chat = (await client.post("/api/v1/chats", json={"title": "huge"}, headers=headers)).json()
    _store_messages(admin_url, tenant, chat["id"], ["before", "y" * 7_000_000, "after"])

    (page,) = await _all_pages(client, chat["id"], headers)

    assert [item["text"][:6] for item in page] == ["before", "yyyyyy", "after"]
    assert page[1]["truncated"] is True and 0 < len(page[1]["text"]) < 7_000_000
    assert "truncated" not in page[0]


async def test_a_bad_transcript_cursor_is_422(client: httpx.AsyncClient, make_tenant: Any) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    chat = (await client.post("/api/v1/chats", json={}, headers=headers)).json()
    response = await client.get(f"/api/v1/chats/{chat['id']}/messages", params={"cursor": "x:1"}, headers=headers)
    assert (response.status_code, response.json()["code"]) == (422, "invalid_cursor")


async def test_forged_list_cursors_are_422(client: httpx.AsyncClient, make_tenant: Any) -> None:
    import base64

    tenant = make_tenant()
    headers = auth_headers(tenant)
    workflow = (await client.post("/api/v1/workflows", json={"name": "w"}, headers=headers)).json()
    forged = base64.urlsafe_b64encode(json.dumps(["2025-01-01T00:00:00+00:00", 5]).encode()).decode()
    for path in ("/api/v1/chats", f"/api/v1/workflows/{workflow['id']}/runs"):
        response = await client.get(path, params={"cursor": forged}, headers=headers)
        assert (response.status_code, response.json()["code"]) == (422, "invalid_cursor"), (path, response.text)
        response = await client.get(path, params={"cursor": "A" * 201}, headers=headers)
        assert (response.status_code, response.json()["code"]) == (422, "invalid_input"), (path, response.text)
