"""Workflows started by webhooks: Standard Webhooks signatures, idempotency, bearer tokens, limits, CRUD and
run history — against the live dev server, the embedded Postgres and Valkey, and moto's Step Functions."""

from __future__ import annotations

import asyncio
import os
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import httpx
import pytest

from personal_agent.workflows import ratelimit
from personal_agent.workflows.webhooks import MAX_BODY_BYTES
from tests.auth import auth_headers
from tests.sfn import wait_for_execution
from tests.sse import read_events
from tests.workflows import create_workflow, db_rows, fire_to_end, sign, text_of


def stored_for(admin_url: str, workflow: dict[str, Any]) -> dict[str, int]:
    """What a webhook may have written for `workflow`: deliveries, rate-limit counts and runs in its chat."""
    return {
        "deliveries": db_rows(
            admin_url, "SELECT count(*) FROM workflow_deliveries WHERE workflow_id = %s", workflow["id"]
        )[0][0],
        "rate_windows": db_rows(
            admin_url, "SELECT count(*) FROM workflow_rate_windows WHERE workflow_id = %s", workflow["id"]
        )[0][0],
        "runs": db_rows(admin_url, "SELECT count(*) FROM runs WHERE chat_id = %s", workflow["chat_id"])[0][0],
    }


def sfn() -> Any:
    return boto3.client("stepfunctions", endpoint_url=os.environ["AWS_ENDPOINT_URL"])


# --- webhooks --------------------------------------------------------------------------------------


async def test_a_signed_webhook_starts_a_durable_run_with_the_body_in_its_prompt(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, echo_model: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    workflow = await create_workflow(
        http, headers, model=echo_model, prompt_template="Build {{body.build}} is {{body.status}}. Raw: {{body}}"
    )
    assert workflow["signing_secret"].startswith("whsec_")
    body = b'{"build": 42, "status": "green"}'
    feed_connected = asyncio.Event()
    feed = asyncio.create_task(
        read_events(http, "/api/v1/feed", headers, limit=2, connected=feed_connected, timeout=60)
    )
    await feed_connected.wait()

    hook = f"/api/v1/hooks/{workflow['id']}"
    sent = sign(workflow["signing_secret"], body)
    response = await http.post(hook, content=body, headers=sent)  # no user token: the signature is the credential

    assert response.status_code == 202, response.text
    accepted = response.json()
    run_id = accepted["run_id"]
    assert accepted["status"] == "started" and accepted["duplicate"] is False
    assert accepted["status_url"] == f"/api/v1/runs/{run_id}" == response.headers["location"]
    frames = await read_events(http, accepted["events_url"], headers)
    assert frames[-1].type == "RUN_FINISHED" and frames[-1].data["outcome"] == {"type": "success"}
    assert text_of(frames) == f"Echo: Build 42 is green. Raw: {body.decode()}"
    status = (await http.get(accepted["status_url"], headers=headers)).json()
    assert (status["status"], status["mode"], status["trigger_source"]) == ("succeeded", "durable", "webhook")
    (arn,) = db_rows(admin_url, "SELECT execution_arn FROM runs WHERE id = %s", run_id)[0]
    assert wait_for_execution(sfn(), arn)["status"] == "SUCCEEDED"

    # The run's messages are in the workflow's chat, and the owner's feed announced it.
    transcript = (await http.get(f"/api/v1/chats/{workflow['chat_id']}/messages", headers=headers)).text
    assert "Build 42 is green" in transcript and "Echo: Build 42" in transcript
    announced = await asyncio.wait_for(feed, 30)
    assert [(f.data["name"], f.data["value"]["run_id"], f.data["value"]["source"]) for f in announced] == [
        ("run_started", run_id, "webhook"),
        ("run_finished", run_id, "webhook"),
    ]
    history = (await http.get(f"/api/v1/workflows/{workflow['id']}/runs", headers=headers)).json()["items"]
    assert [(h["run_id"], h["trigger"], h["key"], h["status"]) for h in history] == [
        (run_id, "webhook", sent["webhook-id"], "succeeded")
    ]


@pytest.mark.parametrize("tamper", ["wrong_secret", "old_timestamp", "modified_body", "no_signature", "future"])
async def test_an_unverified_webhook_is_refused_and_nothing_is_stored(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, tamper: str
) -> None:
    workflow = await create_workflow(http, auth_headers(make_tenant()))
    body = b'{"status": "green"}'
    secret = workflow["signing_secret"]
    if tamper == "wrong_secret":
        sent = sign("whsec_" + "A" * 43 + "=", body)
    elif tamper == "old_timestamp":
        sent = sign(secret, body, at=datetime.now(UTC) - timedelta(minutes=5, seconds=30))
    elif tamper == "future":
        sent = sign(secret, body, at=datetime.now(UTC) + timedelta(minutes=6))
    elif tamper == "modified_body":
        sent = sign(secret, body)
        body = b'{"status": "red"}'
    else:
        sent = {"content-type": "application/json"}

    response = await http.post(f"/api/v1/hooks/{workflow['id']}", content=body, headers=sent)

    assert response.status_code == 401, response.text
    expected = {
        "wrong_secret": "invalid_signature",
        "modified_body": "invalid_signature",
        "old_timestamp": "timestamp_out_of_tolerance",
        "future": "timestamp_out_of_tolerance",
        "no_signature": "missing_credentials",
    }[tamper]
    assert response.json()["code"] == expected
    assert stored_for(admin_url, workflow) == {"deliveries": 0, "rate_windows": 0, "runs": 0}


async def test_the_same_webhook_id_ten_times_at_once_starts_exactly_one_run(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, echo_model: str
) -> None:
    headers = auth_headers(make_tenant())
    workflow = await create_workflow(http, headers, model=echo_model)
    body = b'{"deploy": "v1.2.3"}'
    sent = sign(workflow["signing_secret"], body)

    responses = await asyncio.gather(
        *(http.post(f"/api/v1/hooks/{workflow['id']}", content=body, headers=sent) for _ in range(10))
    )

    assert [r.status_code for r in responses] == [202] * 10, [r.text for r in responses]
    run_ids = {r.json()["run_id"] for r in responses}
    assert len(run_ids) == 1
    assert sorted(r.json()["duplicate"] for r in responses) == [False] + [True] * 9
    assert stored_for(admin_url, workflow)["runs"] == 1
    assert stored_for(admin_url, workflow)["deliveries"] == 1
    frames = await read_events(http, f"/api/v1/runs/{run_ids.pop()}/events", headers)
    assert "v1.2.3" in text_of(frames)
    # A later retry of the same delivery (the sender did not see the answer) gets the same run too.
    again = await http.post(f"/api/v1/hooks/{workflow['id']}", content=body, headers=sent)
    assert again.status_code == 202 and again.json()["run_id"] == responses[0].json()["run_id"]


async def test_a_bearer_token_works_for_senders_that_cannot_sign(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, echo_model: str
) -> None:
    headers = auth_headers(make_tenant())
    workflow = await create_workflow(http, headers, model=echo_model, bearer_token=True)
    token = workflow["bearer_token"]
    assert token.startswith("pa_whk_") and workflow["webhook"]["bearer_token_hint"] == token[:12]
    hook = f"/api/v1/hooks/{workflow['id']}"
    sender = {"authorization": f"Bearer {token}", "idempotency-key": "form-17"}

    first = await http.post(hook, content=b"name=Ada", headers=sender)
    second = await http.post(hook, content=b"name=Ada", headers=sender)
    wrong = await http.post(hook, content=b"x", headers={"authorization": "Bearer pa_whk_not-the-token"})
    user_token = await http.post(hook, content=b"x", headers=headers)  # a user's bearer token is not a credential

    assert first.status_code == 202 and second.json()["run_id"] == first.json()["run_id"]
    assert (wrong.status_code, wrong.json()["code"]) == (401, "invalid_token")
    assert (user_token.status_code, user_token.json()["code"]) == (401, "invalid_token")
    frames = await read_events(http, first.json()["events_url"], headers)
    assert "name=Ada" in text_of(frames)

    rotated = await http.post(
        f"/api/v1/workflows/{workflow['id']}/bearer-token", json={"grace_seconds": 0}, headers=headers
    )
    assert rotated.status_code == 200
    old = await http.post(hook, content=b"x", headers={"authorization": f"Bearer {token}"})
    assert old.status_code == 401
    revoked = await http.delete(f"/api/v1/workflows/{workflow['id']}/bearer-token", headers=headers)
    assert revoked.status_code == 204
    gone = await http.post(hook, content=b"x", headers={"authorization": f"Bearer {rotated.json()['bearer_token']}"})
    assert gone.status_code == 401
    assert stored_for(admin_url, workflow)["deliveries"] == 1


async def test_a_rotated_signing_secret_keeps_working_through_its_grace_period(
    http: httpx.AsyncClient, make_tenant: Any, echo_model: str
) -> None:
    headers = auth_headers(make_tenant())
    workflow = await create_workflow(http, headers, model=echo_model)
    old = workflow["signing_secret"]
    hook = f"/api/v1/hooks/{workflow['id']}"

    rotated = await http.post(f"/api/v1/workflows/{workflow['id']}/signing-secret", json={}, headers=headers)
    assert rotated.status_code == 200 and rotated.json()["previous_valid_until"]
    new = rotated.json()["signing_secret"]
    assert (
        new != old
        and (await http.get(f"/api/v1/workflows/{workflow['id']}", headers=headers)).json()["webhook"][
            "signing_secret_hint"
        ]
        == new[:12]
    )
    for secret in (old, new):
        response = await fire_to_end(http, hook, secret, headers)
        assert response.status_code == 202, response.text

    await http.post(f"/api/v1/workflows/{workflow['id']}/signing-secret", json={"grace_seconds": 0}, headers=headers)
    refused = [(await http.post(hook, content=b"{}", headers=sign(s, b"{}"))).status_code for s in (old, new)]
    assert refused == [401, 401]  # both earlier secrets are gone at once


async def test_a_workflow_over_its_rate_limit_gets_429_with_retry_after(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, echo_model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pin the minute so the three requests cannot straddle a window edge.
    monkeypatch.setattr(ratelimit, "clock", lambda: datetime(2030, 1, 1, 12, 0, 40, tzinfo=UTC))
    headers = auth_headers(make_tenant())
    workflow = await create_workflow(http, headers, model=echo_model, rate_limit_per_minute=2)
    hook = f"/api/v1/hooks/{workflow['id']}"

    responses = [await fire_to_end(http, hook, workflow["signing_secret"], headers) for _ in range(3)]

    assert [r.status_code for r in responses] == [202, 202, 429]
    limited = responses[2]
    assert limited.json()["code"] == "rate_limited" and limited.headers["retry-after"] == "20"
    assert stored_for(admin_url, workflow)["deliveries"] == 2  # the refused delivery can be retried later
    monkeypatch.setattr(ratelimit, "clock", lambda: datetime(2030, 1, 1, 12, 1, 0, tzinfo=UTC))
    retried = await http.post(hook, content=b"{}", headers=sign(workflow["signing_secret"], b"{}"))
    assert retried.status_code == 202


async def test_webhook_bodies_over_the_limit_get_413(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str, echo_model: str
) -> None:
    workflow = await create_workflow(http, auth_headers(make_tenant()), model=echo_model, prompt_template="{{body}}")
    hook = f"/api/v1/hooks/{workflow['id']}"
    too_big = b"x" * (MAX_BODY_BYTES + 1)

    refused = await http.post(hook, content=too_big, headers=sign(workflow["signing_secret"], too_big))
    at_limit = b"y" * MAX_BODY_BYTES
    accepted = await http.post(hook, content=at_limit, headers=sign(workflow["signing_secret"], at_limit))

    assert (refused.status_code, refused.json()["code"]) == (413, "payload_too_large")
    assert refused.json()["details"]["limit"] == MAX_BODY_BYTES
    assert accepted.status_code == 202, accepted.text
    assert stored_for(admin_url, workflow)["deliveries"] == 1


async def test_unknown_and_disabled_workflows(http: httpx.AsyncClient, make_tenant: Any) -> None:
    headers = auth_headers(make_tenant())
    missing = await http.post(
        f"/api/v1/hooks/{uuid.uuid4()}", content=b"{}", headers=sign("whsec_" + "B" * 43 + "=", b"{}")
    )
    assert (missing.status_code, missing.json()["code"]) == (404, "workflow_not_found")
    workflow = await create_workflow(http, headers, webhook_enabled=False)
    off = await http.post(
        f"/api/v1/hooks/{workflow['id']}", content=b"{}", headers=sign(workflow["signing_secret"], b"{}")
    )
    assert (off.status_code, off.json()["code"]) == (403, "webhook_disabled")


# --- the workflow API ------------------------------------------------------------------------------


async def test_workflow_crud_is_per_owner_and_per_org(http: httpx.AsyncClient, make_tenant: Any) -> None:
    owner = make_tenant()
    headers = auth_headers(owner)
    stranger = auth_headers(make_tenant(roles=("org-admin",)), roles=("org-admin",))
    created = await create_workflow(http, headers, instructions="Summarise CI results.", tools=["calculate"])
    wid = created["id"]
    assert created["webhook"]["url"] == f"/api/v1/hooks/{wid}" and created["schedule"] is None
    assert created["approval_policy"] == "wait" and created["rate_limit_per_minute"] == 60

    fetched = (await http.get(f"/api/v1/workflows/{wid}", headers=headers)).json()
    assert "signing_secret" not in fetched and created["signing_secret"] not in str(fetched)
    assert fetched["webhook"]["signing_secret_hint"] == created["signing_secret"][:12]
    listed = (await http.get("/api/v1/workflows", headers=headers)).json()["items"]
    assert [w["id"] for w in listed] == [wid]

    patched = await http.patch(
        f"/api/v1/workflows/{wid}",
        json={"name": "nightly", "approval_policy": "deny", "rate_limit_per_minute": 5, "tools": None},
        headers=headers,
    )
    assert patched.status_code == 200, patched.text
    assert (patched.json()["name"], patched.json()["approval_policy"], patched.json()["tools"]) == (
        "nightly",
        "deny",
        None,
    )
    assert patched.json()["instructions"] == "Summarise CI results."  # fields not sent stay

    for method, path in (
        ("GET", f"/api/v1/workflows/{wid}"),
        ("PATCH", f"/api/v1/workflows/{wid}"),
        ("GET", f"/api/v1/workflows/{wid}/runs"),
        ("POST", f"/api/v1/workflows/{wid}/signing-secret"),
        ("DELETE", f"/api/v1/workflows/{wid}"),
    ):
        response = await http.request(method, path, json={} if method != "GET" else None, headers=stranger)
        assert (response.status_code, response.json()["code"]) == (404, "workflow_not_found"), (method, path)
    assert (await http.get("/api/v1/workflows", headers=stranger)).json()["items"] == []

    deleted = await http.delete(f"/api/v1/workflows/{wid}", headers=headers)
    assert deleted.status_code == 204
    assert (await http.get(f"/api/v1/workflows/{wid}", headers=headers)).status_code == 404
    assert (await http.get(f"/api/v1/chats/{created['chat_id']}", headers=headers)).status_code == 200  # chat stays


async def test_org_admins_see_the_orgs_workflows_and_members_see_their_own(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    owner = make_tenant()
    workflow = await create_workflow(http, auth_headers(owner))
    colleague_id = db_rows(
        admin_url,
        "WITH u AS (INSERT INTO users (issuer, subject) VALUES ('urn:personal-agent:dev-issuer', %s) RETURNING id)"
        " INSERT INTO memberships (org_id, user_id, roles) SELECT %s, id, ARRAY['user'] FROM u RETURNING user_id",
        f"colleague-{uuid.uuid4().hex[:8]}",
        owner.org_id,
    )
    assert colleague_id
    subject = db_rows(admin_url, "SELECT subject FROM users WHERE id = %s", colleague_id[0][0])[0][0]
    colleague = type(owner)(owner.org_id, owner.slug, colleague_id[0][0], subject)
    admin = auth_headers(colleague, roles=("org-admin",))
    member = auth_headers(colleague)

    assert [w["id"] for w in (await http.get("/api/v1/workflows", headers=admin)).json()["items"]] == [workflow["id"]]
    assert (await http.get("/api/v1/workflows", headers=member)).json()["items"] == []
    assert (await http.get(f"/api/v1/workflows/{workflow['id']}", headers=member)).status_code == 404
    assert (await http.get(f"/api/v1/workflows/{workflow['id']}", headers=admin)).status_code == 200


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"prompt_template": "Hello {{bodyy}}"}, "unknown_placeholder"),
        ({"tools": ["no_such_tool"]}, "unknown_tool"),
        ({"schedule": {"expression": "every day at nine"}}, "invalid_schedule_expression"),
        ({"schedule": {"expression": "cron(0 9 * * * *)"}}, "invalid_schedule_expression"),
        ({"schedule": {"expression": "rate(5 minutes)", "timezone": "Mars/Olympus"}}, "invalid_timezone"),
        ({"chat_id": str(uuid.uuid4())}, "chat_not_found"),
    ],
)
async def test_bad_workflows_are_refused_with_what_was_wrong(
    http: httpx.AsyncClient, make_tenant: Any, fields: dict[str, Any], code: str
) -> None:
    headers = auth_headers(make_tenant())
    response = await http.post("/api/v1/workflows", json={"name": "bad", **fields}, headers=headers)
    assert response.json()["code"] == code, response.text
    assert response.status_code in (404, 422)
    assert (await http.get("/api/v1/workflows", headers=headers)).json()["items"] == []


def test_signing_secrets_are_sealed_under_kms_on_aws(stack: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from botocore.exceptions import ClientError
    from cryptography.exceptions import InvalidTag

    from personal_agent.errors import ConfigurationError
    from personal_agent.settings import get_settings
    from personal_agent.workflows import credentials

    org_id, workflow_id = uuid.uuid4(), uuid.uuid4()
    local = credentials.seal(org_id, workflow_id, "whsec_local")
    aws = get_settings().model_copy(update={"environment": "aws"})
    monkeypatch.setattr(credentials, "get_settings", lambda: aws)

    sealed = credentials.seal(org_id, workflow_id, "whsec_c2VjcmV0")

    assert sealed.encrypted_data_key and b"whsec_c2VjcmV0" not in sealed.ciphertext
    assert credentials.unseal(org_id, workflow_id, sealed) == "whsec_c2VjcmV0"
    with pytest.raises((InvalidTag, ClientError)):
        credentials.unseal(org_id, uuid.uuid4(), sealed)  # bound to its workflow
    with pytest.raises(ConfigurationError):
        credentials.unseal(org_id, workflow_id, local)  # the local key file never opens secrets on AWS
