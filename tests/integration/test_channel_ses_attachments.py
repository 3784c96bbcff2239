"""E-mail in with attachments on AWS (issue 34): SES's receipt rule stored the raw MIME message in S3 (moto) and
invokes the channels function with its receipt (the event as SES sends it, tests/events/channels_ses_receipt.json).
The function reads the message from the bucket, stages each attachment within the web chat's limits, and hands the
message to an async invoke of itself (`PA_CHANNELS_WORKER_FUNCTION`, moto's Lambda running the same handler): the
linked sender's files become the thread chat's attachments (the image reaches the model), and the refused ones are
named in the threaded reply sent through SES. The local twin is tests/e2e/test_dev_server_channel_email.py."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from typing import Any

import boto3
import httpx
import pytest
from pydantic_ai.messages import BinaryContent, ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from personal_agent.channels import admin, links, senders
from personal_agent.db import org_transaction
from personal_agent.identity.principal import Principal
from personal_agent.models.catalog import register_model, unregister_model
from personal_agent.settings import get_settings
from tests.auth import auth_headers
from tests.lambda_context import FakeLambdaContext, load_event

SENDER = "alice@example.com"
PIXEL = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
    b"\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82"
)


@pytest.fixture
def on_aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, list[list[Any]]]]:
    """The channels function's settings as template.yaml gives them (its mail bucket, its own name for the job after
    the ack), a scripted model answering for the built-in assistant, and what that model was sent."""
    bucket = f"pa-inbound-{uuid.uuid4().hex[:8]}"
    boto3.client("s3").create_bucket(Bucket=bucket)
    prompts: list[list[Any]] = []

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        last = [m for m in messages if isinstance(m, ModelRequest)][-1]
        for part in last.parts:
            if isinstance(part, UserPromptPart):
                prompts.append([part.content] if isinstance(part.content, str) else list(part.content))
        yield "Thanks, I have your files."

    model_id = f"test:{uuid.uuid4().hex[:8]}"  # it reads images: a message carrying one needs a vision model
    register_model(model_id, lambda: FunctionModel(stream_function=answer, model_name="scripted"), tags=("vision",))
    monkeypatch.setenv("PA_CHANNEL_EMAIL_BUCKET", bucket)
    monkeypatch.setenv("PA_CHANNELS_WORKER_FUNCTION", "pa-channels")
    monkeypatch.setenv("PA_DEFAULT_MODEL", model_id)
    get_settings.cache_clear()
    try:
        yield bucket, prompts
    finally:
        unregister_model(model_id)
        get_settings.cache_clear()


def _mime(address: str, message_id: str) -> bytes:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = f"Alice <{SENDER}>", address, "Files"
    message["Message-ID"] = message_id
    message.set_content("here are the files")
    message.add_attachment(PIXEL, maintype="image", subtype="png", filename="pixel.png")
    message.add_attachment(b"meeting notes\n", maintype="text", subtype="plain", filename="notes.txt")
    # Mailers often send a known type as octet-stream: the name tells it (and an .exe is no attachment we take).
    message.add_attachment(b"MZ not really", maintype="application", subtype="octet-stream", filename="evil.exe")
    message.add_attachment(b"", maintype="image", subtype="png", filename="empty.png")
    return message.as_bytes(policy=policy.SMTP)


def _receipt(address: str, ses_id: str) -> dict[str, Any]:
    event = load_event("channels_ses_receipt.json")
    mail, receipt = event["Records"][0]["ses"]["mail"], event["Records"][0]["ses"]["receipt"]
    mail["messageId"], mail["destination"], receipt["recipients"] = ses_id, [address], [address]
    return event


def _replies_to(message_id: str, containing: str, timeout: float = 90) -> list[EmailMessage]:
    """What went out through moto's SES in reply to `message_id`, once one contains `containing`."""
    deadline = time.monotonic() + timeout
    while True:
        data = httpx.get(f"{get_settings().aws_endpoint_url}/moto-api/data.json", timeout=30).json()
        raws = [m["raw_data"] for m in data.get("ses", {}).get("RawMessage", [])]
        sent = [BytesParser(policy=policy.default).parsebytes(r.encode()) for r in raws]
        found = [m for m in sent if isinstance(m, EmailMessage) and m["In-Reply-To"] == message_id]
        found = [m for m in found if containing in _body(m)]
        if found:
            return found
        assert time.monotonic() < deadline, f"no reply to {message_id} containing {containing!r}"
        time.sleep(0.2)  # moto's outbox has nothing to wait on


def _body(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    return str(part.get_content()) if part is not None else ""


async def _runs_of(org_id: uuid.UUID) -> list[dict[str, Any]]:
    async with org_transaction(org_id) as conn:
        rows = await conn.execute("SELECT id, chat_id, status, trigger_source FROM runs ORDER BY created_at")
        return list(await rows.fetchall())


async def _finished_run(org_id: uuid.UUID, timeout: float = 90) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        runs = await _runs_of(org_id)
        if runs and runs[-1]["status"] in ("succeeded", "failed", "cancelled"):
            return runs[-1]
        assert time.monotonic() < deadline, runs
        await asyncio.sleep(0.2)


async def test_an_ses_message_with_attachments_becomes_the_chats_files(
    make_tenant: Any, client: httpx.AsyncClient, on_aws: tuple[str, list[list[Any]]]
) -> None:
    from functions.channels.app import handler

    bucket, prompts = on_aws
    tenant = make_tenant(("org-admin",))
    principal = Principal(tenant.user_id, tenant.org_id, tenant.slug, frozenset({"org-admin"}), tenant.subject)
    address = f"agent-{uuid.uuid4().hex[:8]}@acme.example.com"
    await admin.put_channel(principal, "email", address, None, {})
    async with org_transaction(tenant.org_id) as conn:
        code = await senders.link_code(conn, tenant.org_id, "email", SENDER, SENDER)
    await links.confirm(principal, code)

    message_id, ses_id = f"<files-{uuid.uuid4().hex[:8]}@example.com>", uuid.uuid4().hex
    boto3.client("s3").put_object(Bucket=bucket, Key=f"inbound/{ses_id}", Body=_mime(address, message_id))
    # Lambda calls the handler on a thread of its own, with its own event loop.
    assert await asyncio.to_thread(handler, _receipt(address, ses_id), FakeLambdaContext()) == {"handled": 1}

    (refused,) = await asyncio.to_thread(_replies_to, message_id, "not taken")
    assert refused["To"] == SENDER and refused["Reply-To"] == address and refused["Subject"] == "Re: Files"
    assert "evil.exe" in _body(refused) and "empty.png" in _body(refused), _body(refused)
    assert "pixel.png" not in _body(refused) and "notes.txt" not in _body(refused)
    run = await _finished_run(tenant.org_id)
    assert run["trigger_source"] == "email" and run["status"] == "succeeded", run
    await asyncio.to_thread(_replies_to, message_id, "I have your files")
    headers = auth_headers(tenant, ("org-admin",))
    messages = (await client.get(f"/api/v1/chats/{run['chat_id']}/messages", headers=headers)).json()["items"]
    (user,) = [m for m in messages if m["role"] == "user"]
    files = {f["name"]: f for f in user["attachments"]}
    assert set(files) == {"pixel.png", "notes.txt"}, files
    assert files["pixel.png"]["kind"] == "image" and files["notes.txt"]["kind"] == "document"
    got = await client.get(f"/api/v1/attachments/{files['pixel.png']['id']}/download", headers=headers)
    assert got.status_code == 200, got.text
    assert (await asyncio.to_thread(httpx.get, got.json()["url"], timeout=30)).content == PIXEL
    # The image reached the model with the message.
    images = [p for prompt in prompts for p in prompt if isinstance(p, BinaryContent)]
    assert [(i.media_type, i.data) for i in images] == [("image/png", PIXEL)]
