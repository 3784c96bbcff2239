"""Data exports in the background (issue 38): `POST /api/v1/me/export` answers 202 with the export's id and
`Location`; the data jobs function (moto's Lambda, this process) writes the ZIP into the documents bucket (moto S3)
in parts; `GET /api/v1/me/exports/{id}` gives its status and, once ready, a presigned URL that downloads it without
a token. Another member or org gets 404; an org admin exports every member's chats the same way under /admin. An
export bigger than Lambda's 6 MB response is built while holding a fraction of it in memory. The daily retention
schedule's event, given to the data jobs function, sweeps every org: exports past their time go with every
version of their object, due temporary chats with their rows."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import random
import subprocess
import sys
import time
import tracemalloc
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID, uuid4

import boto3
import httpx
import pytest

from personal_agent.chats import policy_store
from personal_agent.chats import store as chat_store
from personal_agent.chats.message_store import append_messages
from personal_agent.db import org_transaction
from personal_agent.knowledge import objects
from personal_agent.lifecycle import data_retention
from personal_agent.lifecycle.export_upload import S3ObjectWriter
from personal_agent.lifecycle.user_data import write_archive
from personal_agent.local.aws import function_arn
from personal_agent.local.lambda_registry import load_template
from personal_agent.local.ports import free_port
from personal_agent.runtime import run_sync
from personal_agent.settings import get_settings
from tests.auth import auth_headers
from tests.members import colleague_of

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ADMIN = ("org-admin",)


def ask(text: str) -> dict[str, Any]:
    return {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": text}]}


def answer(text: str) -> dict[str, Any]:
    return {"kind": "response", "parts": [{"part_kind": "text", "content": text}]}


async def branched_chat(org_id: UUID, user_id: UUID, title: str) -> tuple[UUID, dict[str, int]]:
    """A chat whose first answer was regenerated: two branches under the first question."""
    async with org_transaction(org_id) as conn:
        chat = await chat_store.insert_chat(conn, org_id, user_id, title)
        first = await append_messages(conn, org_id, chat.id, None, [ask(f"{title}: what is 2+2?")])
        old = await append_messages(conn, org_id, chat.id, None, [answer("five, surely")], first)
        new = await append_messages(conn, org_id, chat.id, None, [answer("four")], first)
    assert first and old and new
    return chat.id, {"question": first, "old": old, "new": new}


async def wait_ready(http: httpx.AsyncClient, location: str, headers: dict[str, str]) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        got = await http.get(location, headers=headers)
        assert got.status_code == 200, got.text
        if got.json()["status"] in ("ready", "failed"):
            return dict(got.json())
        await asyncio.sleep(0.1)
    raise AssertionError(f"the export at {location} was not ready within 60 s")


async def download(url: str) -> zipfile.ZipFile:
    async with httpx.AsyncClient() as plain:  # no Authorization: the URL's signature is the permission
        got = await plain.get(url)
    assert got.status_code == 200, got.text
    assert got.headers["content-type"] == "application/zip"
    assert "attachment" in got.headers["content-disposition"]
    return zipfile.ZipFile(io.BytesIO(got.content))


def s3() -> Any:
    return boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1")


async def test_my_export_is_built_in_the_background_and_downloaded_from_a_presigned_url(
    client: httpx.AsyncClient, make_tenant: Any
) -> None:
    erin = make_tenant()
    chat_id, ids = await branched_chat(erin.org_id, erin.user_id, "Arithmetic")
    headers = auth_headers(erin)
    saved = await client.post("/api/v1/me/memories", headers=headers, json={"text": "Erin likes tea"})
    assert saved.status_code in (200, 201), saved.text

    started = await client.post("/api/v1/me/export", headers=headers)
    assert started.status_code == 202, started.text
    export_id = started.json()["id"]
    assert started.headers["location"] == f"/api/v1/me/exports/{export_id}"
    assert started.json()["status"] in ("pending", "running", "ready")

    done = await wait_ready(client, started.headers["location"], headers)
    assert done["status"] == "ready" and done["size_bytes"] > 0
    assert done["download_expires_in"] == objects.DOWNLOAD_EXPIRES_SECONDS
    assert datetime.fromisoformat(done["expires_at"]) > datetime.now(UTC) + timedelta(hours=23)
    archive = await download(done["download_url"])

    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["scope"] == "user" and manifest["chats"] == 1 and manifest["complete"] is True
    body = json.loads(archive.read(f"chats/{chat_id}.json"))
    stored = {m["id"]: m for m in body["messages"]}
    assert set(stored) == set(ids.values())  # both branches
    assert stored[ids["old"]]["parent_id"] == stored[ids["new"]]["parent_id"] == ids["question"]
    markdown = archive.read(f"chats/{chat_id}.md").decode()
    assert "four" in markdown and "five, surely" not in markdown  # the latest branch
    memories = json.loads(archive.read("memories.json"))
    assert [m["text"] for m in memories["items"]] == ["Erin likes tea"]

    # The object is where the row says, under the org's exports prefix.
    key = f"exports/{erin.org_id}/{export_id}.zip"
    assert s3().head_object(Bucket=get_settings().documents_bucket, Key=key)["ContentLength"] == done["size_bytes"]


async def test_nobody_else_sees_an_export(client: httpx.AsyncClient, make_tenant: Any) -> None:
    erin = make_tenant(ADMIN)
    await branched_chat(erin.org_id, erin.user_id, "Private")
    started = await client.post("/api/v1/me/export", headers=auth_headers(erin, ADMIN))
    assert started.status_code == 202
    location = started.headers["location"]
    await wait_ready(client, location, auth_headers(erin, ADMIN))

    colleague = colleague_of(os.environ["DATABASE_ADMIN_URL"], erin)
    stranger = make_tenant()
    for other in (colleague, stranger):
        got = await client.get(location, headers=auth_headers(other))
        assert got.status_code == 404 and got.json()["code"] == "export_not_found"
    # A person's export is not an org export, even to the admin who made it.
    as_org = await client.get(f"/api/v1/admin/exports/{started.json()['id']}", headers=auth_headers(erin, ADMIN))
    assert as_org.status_code == 404
    assert (await client.get(f"/api/v1/me/exports/{UUID(int=1)}", headers=auth_headers(erin))).status_code == 404


async def test_an_org_admin_exports_every_member_s_chats(client: httpx.AsyncClient, make_tenant: Any) -> None:
    boss = make_tenant(ADMIN)
    mine, _ = await branched_chat(boss.org_id, boss.user_id, "Boss's chat")
    colleague = colleague_of(os.environ["DATABASE_ADMIN_URL"], boss)
    member = UUID((await client.get("/api/v1/me", headers=auth_headers(colleague))).json()["user_id"])
    theirs, _ = await branched_chat(boss.org_id, member, "Member's chat")
    outsider = make_tenant()
    elsewhere, _ = await branched_chat(outsider.org_id, outsider.user_id, "Other org")

    refused = await client.post("/api/v1/admin/export", headers=auth_headers(outsider))
    assert refused.status_code == 403
    started = await client.post("/api/v1/admin/export", headers=auth_headers(boss, ADMIN))
    assert started.status_code == 202, started.text
    assert started.headers["location"] == f"/api/v1/admin/exports/{started.json()['id']}"
    done = await wait_ready(client, started.headers["location"], auth_headers(boss, ADMIN))
    assert done["scope"] == "org"
    archive = await download(done["download_url"])
    names = set(archive.namelist())
    assert {f"chats/{mine}.json", f"chats/{theirs}.json"} <= names
    assert f"chats/{elsewhere}.json" not in names and "memories.json" not in names
    assert json.loads(archive.read(f"chats/{theirs}.json"))["chat"]["user_id"] == str(member)
    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["scope"] == "org" and manifest["chats"] == 2
    # Only the admin who started it reads it: a member gets 403 under /admin; under /me it is no export of theirs.
    assert (await client.get(started.headers["location"], headers=auth_headers(colleague))).status_code == 403
    assert (await client.get(f"/api/v1/me/exports/{done['id']}", headers=auth_headers(boss))).status_code == 404


async def own_files(client: httpx.AsyncClient, org_id: UUID, user_id: UUID, headers: dict[str, str], tag: str) -> Any:
    """A chat attachment (with its bytes in the bucket), a personal knowledge document (its file too) and a private
    agent of the user; what the export should hold for each."""
    from personal_agent.attachments import objects as attachment_objects
    from personal_agent.attachments import store as attachment_store
    from personal_agent.knowledge import store as document_store
    from personal_agent.knowledge.transaction import knowledge_transaction

    rng = random.Random(tag)
    photo = rng.randbytes(3 * 1024 * 1024 + 17)  # bigger than a copy chunk: streamed in several
    attachment_id, document_id = uuid4(), uuid4()
    attachment_key = attachment_objects.object_key(org_id, attachment_id, f"{tag} photo.png")
    objects.put_object(attachment_key, photo, "image/png")
    paper = f"{tag}'s notes on the quarterly plan".encode()
    document_key = objects.object_key(org_id, document_id, f"{tag}-notes.txt")
    objects.put_object(document_key, paper, "text/plain")
    async with org_transaction(org_id) as conn:
        chat = await chat_store.insert_chat(conn, org_id, user_id, f"{tag} with a photo")
        await attachment_store.insert(
            conn,
            attachment_id=attachment_id,
            org_id=org_id,
            user_id=user_id,
            chat_id=chat.id,
            kind="image",
            filename=f"{tag} photo.png",
            content_type="image/png",
            size=len(photo),
            object_key=attachment_key,
        )
    async with knowledge_transaction(org_id, user_id) as conn:
        await document_store.insert_document(
            conn,
            {
                "id": document_id,
                "org_id": org_id,
                "created_by": user_id,
                "owner_user_id": user_id,
                "collection": "personal",
                "filename": f"{tag}-notes.txt",
                "content_type": "text/plain",
                "size": len(paper),
                "classification": "confidential",
                "object_key": document_key,
                "trusted": False,
            },
        )
    agent = await client.post(
        "/api/v1/agents",
        headers=headers,
        json={"name": f"{tag} reviewer", "slug": f"{tag}-reviewer", "instructions": f"You review for {tag}."},
    )
    assert agent.status_code == 201, agent.text
    return {
        "attachment": (f"attachments/{attachment_id}/{tag} photo.png", photo),
        "document": (f"documents/{document_id}/{tag}-notes.txt", paper),
        "agent": f"agents/{tag}-reviewer.json",
    }


async def test_my_export_has_my_attachments_documents_and_agents_and_nobody_else_s(
    client: httpx.AsyncClient, make_tenant: Any
) -> None:
    erin = make_tenant()
    colleague = colleague_of(os.environ["DATABASE_ADMIN_URL"], erin)
    member = UUID((await client.get("/api/v1/me", headers=auth_headers(colleague))).json()["user_id"])
    mine = await own_files(client, erin.org_id, erin.user_id, auth_headers(erin), "erin")
    theirs = await own_files(client, erin.org_id, member, auth_headers(colleague), "colm")

    started = await client.post("/api/v1/me/export", headers=auth_headers(erin))
    assert started.status_code == 202, started.text
    done = await wait_ready(client, started.headers["location"], auth_headers(erin))
    assert done["status"] == "ready", done
    archive = await download(done["download_url"])
    names = set(archive.namelist())

    for kind in ("attachment", "document"):
        name, data = mine[kind]
        assert archive.read(name) == data  # the bytes themselves
        assert theirs[kind][0] not in names
    agent = json.loads(archive.read(mine["agent"]))
    assert agent["agent"]["slug"] == "erin-reviewer"
    assert [v["config"]["instructions"] for v in agent["versions"]] == ["You review for erin."]
    assert theirs["agent"] not in names
    attachments = json.loads(archive.read("attachments.json"))["items"]
    assert [(a["filename"], a["file"]) for a in attachments] == [("erin photo.png", mine["attachment"][0])]
    documents = json.loads(archive.read("documents.json"))["items"]
    assert [(d["classification"], d["file"]) for d in documents] == [("confidential", mine["document"][0])]
    manifest = json.loads(archive.read("manifest.json"))
    assert (manifest["attachments"], manifest["documents"], manifest["agents"]) == (1, 1, 1)


async def test_an_org_admin_s_export_has_the_org_s_documents_and_agents(
    client: httpx.AsyncClient, make_tenant: Any
) -> None:
    from personal_agent.knowledge import store as document_store
    from personal_agent.knowledge.transaction import knowledge_transaction

    boss = make_tenant(ADMIN)
    colleague = colleague_of(os.environ["DATABASE_ADMIN_URL"], boss)
    member = UUID((await client.get("/api/v1/me", headers=auth_headers(colleague))).json()["user_id"])
    private = await own_files(client, boss.org_id, member, auth_headers(colleague), "colm")
    handbook = b"The org's handbook"
    document_id = uuid4()
    key = objects.object_key(boss.org_id, document_id, "handbook.txt")
    objects.put_object(key, handbook, "text/plain")
    async with knowledge_transaction(boss.org_id, boss.user_id, admin=True) as conn:
        await document_store.insert_document(
            conn,
            {
                "id": document_id,
                "org_id": boss.org_id,
                "created_by": boss.user_id,
                "owner_user_id": None,
                "collection": "org",
                "filename": "handbook.txt",
                "content_type": "text/plain",
                "size": len(handbook),
                "classification": "standard",
                "object_key": key,
                "trusted": False,
            },
        )
    shared = await client.post(
        "/api/v1/agents",
        headers=auth_headers(boss, ADMIN),
        json={"name": "Helpdesk", "slug": "helpdesk", "instructions": "Answer IT questions.", "visibility": "org"},
    )
    assert shared.status_code == 201, shared.text
    outsider = make_tenant(ADMIN)
    elsewhere = await own_files(client, outsider.org_id, outsider.user_id, auth_headers(outsider, ADMIN), "otto")

    started = await client.post("/api/v1/admin/export", headers=auth_headers(boss, ADMIN))
    assert started.status_code == 202, started.text
    done = await wait_ready(client, started.headers["location"], auth_headers(boss, ADMIN))
    archive = await download(done["download_url"])
    names = set(archive.namelist())
    assert archive.read(f"documents/{document_id}/handbook.txt") == handbook
    assert json.loads(archive.read("agents/helpdesk.json"))["versions"][0]["config"]["instructions"] == (
        "Answer IT questions."
    )
    # A member's attachments, personal documents and private agents stay theirs; another org's are never there.
    for files in (private, elsewhere):
        assert not {files["attachment"][0], files["document"][0], files["agent"]} & names
    assert not [n for n in names if n.startswith("attachments/")]


@pytest.fixture
def separate_s3() -> Iterator[Any]:
    """S3 (moto) in a process of its own, so that what the test measures in this one is the export's memory alone
    (the stack's moto keeps every object it is sent in this process)."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise AssertionError("moto did not start") from None
                time.sleep(0.05)
        client = boto3.client("s3", endpoint_url=url, region_name="us-east-1")
        client.create_bucket(Bucket="exports-measured")
        yield client
    finally:
        server.terminate()
        server.wait(10)


async def test_an_export_larger_than_a_lambda_response_is_built_in_bounded_memory(
    make_tenant: Any, separate_s3: Any
) -> None:
    erin = make_tenant()
    rng = random.Random(38)
    count = 600
    async with org_transaction(erin.org_id) as conn:
        chat = await chat_store.insert_chat(conn, erin.org_id, erin.user_id, "Big")
        parent = None
        for _ in range(count):  # 600 x 30 KB of base64 noise: 18 MB of text, in the JSON and the Markdown
            text = base64.b64encode(rng.randbytes(22_500)).decode()
            parent = await append_messages(conn, erin.org_id, chat.id, None, [ask(text)], parent)
    key = f"exports/{erin.org_id}/{chat.id}.zip"
    writer = S3ObjectWriter(separate_s3, "exports-measured", key, "application/zip", part_size=5 * 1024 * 1024)
    tracemalloc.start()
    try:
        with writer:
            await write_archive(erin.org_id, erin.user_id, "user", erin.slug, writer)  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    print(f"export of {writer.size / 1e6:.1f} MB built with a traced peak of {peak / 1e6:.1f} MB")
    assert writer.size > 6 * 1024 * 1024  # more than a Lambda response may carry
    assert peak < writer.size  # never the whole ZIP in memory: a part, a page of messages, the client's copies
    body = separate_s3.get_object(Bucket="exports-measured", Key=key)["Body"].read()
    assert len(body) == writer.size
    archive = zipfile.ZipFile(io.BytesIO(body))
    assert len(json.loads(archive.read(f"chats/{chat.id}.json"))["messages"]) == count


async def test_an_attachment_is_copied_into_the_export_without_holding_it(
    make_tenant: Any, separate_s3: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 40 MB attachment (incompressible) goes from the bucket into the export's ZIP a chunk at a time: the traced
    peak stays below the file's size (measured: 24 MB, mostly the uploader's 5 MiB parts and their copies)."""
    from personal_agent.attachments import store as attachment_store

    erin = make_tenant()
    monkeypatch.setattr(objects, "_client", lambda: separate_s3)
    monkeypatch.setattr(objects, "bucket", lambda: "exports-measured")
    film = random.Random(40).randbytes(40 * 1024 * 1024)
    attachment_id = uuid4()
    key = f"attachments/{erin.org_id}/{attachment_id}/film.mp4"
    separate_s3.put_object(Bucket="exports-measured", Key=key, Body=film)
    size = len(film)
    async with org_transaction(erin.org_id) as conn:
        chat = await chat_store.insert_chat(conn, erin.org_id, erin.user_id, "A film")
        await attachment_store.insert(
            conn,
            attachment_id=attachment_id,
            org_id=erin.org_id,
            user_id=erin.user_id,
            chat_id=chat.id,
            kind="document",
            filename="film.mp4",
            content_type="video/mp4",
            size=size,
            object_key=key,
        )
    del film
    out = f"exports/{erin.org_id}/{attachment_id}.zip"
    writer = S3ObjectWriter(separate_s3, "exports-measured", out, "application/zip", part_size=5 * 1024 * 1024)
    tracemalloc.start()
    try:
        with writer:
            await write_archive(erin.org_id, erin.user_id, "user", erin.slug, writer)  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    print(f"a {size / 1e6:.0f} MB attachment exported with a traced peak of {peak / 1e6:.1f} MB")
    assert peak < size  # the file whole in memory would be its size alone; here: the writer's parts and a chunk
    body = separate_s3.get_object(Bucket="exports-measured", Key=out)["Body"].read()
    copied = zipfile.ZipFile(io.BytesIO(body)).read(f"attachments/{attachment_id}/film.mp4")
    assert copied == random.Random(40).randbytes(40 * 1024 * 1024)


def test_the_daily_schedule_s_event_sweeps_every_org(make_tenant: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The template's schedule, created in moto's EventBridge Scheduler as the stack would, and fired the way
    Scheduler does (its input to its target): the data jobs function expires exports and temporary chats of
    every org, and records the counts."""
    first, second = make_tenant(), make_tenant()
    exports = []
    for tenant in (first, second):
        exports.append(run_sync(_ready_export(tenant)))
    temporary = run_sync(_temporary_chat(second))

    schedule = load_template(_template())["Resources"]["RetentionSchedule"]["Properties"]
    scheduler: Any = boto3.client("scheduler", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1")
    group = get_settings().schedule_group
    try:
        scheduler.get_schedule_group(Name=group)
    except scheduler.exceptions.ResourceNotFoundException:
        scheduler.create_schedule_group(Name=group)
    target = {
        "Arn": function_arn("pa-data-jobs"),
        "RoleArn": "arn:aws:iam::123456789012:role/pa-retention",
        "Input": schedule["Target"]["Input"],
    }
    name = f"pa-retention-{first.slug}"
    scheduler.create_schedule(
        Name=name,
        GroupName=group,
        ScheduleExpression=schedule["ScheduleExpression"],
        FlexibleTimeWindow=schedule["FlexibleTimeWindow"],
        Target=target,
    )
    try:
        fired = scheduler.get_schedule(Name=name, GroupName=group)["Target"]
        # Nothing is due yet: the exports stay.
        totals = _fire(fired)
        assert totals["expired_exports"] == 0
        assert all(_versions(key) for _, key in exports)

        monkeypatch.setenv("PA_RETENTION_CLOCK_SKEW_SECONDS", str(25 * 3600))  # a day and an hour later
        get_settings.cache_clear()
        totals = _fire(fired)
        assert totals["expired_exports"] >= 2 and totals["temporary_chats"] >= 1
        for tenant, (export_id, key) in zip((first, second), exports, strict=True):
            assert _versions(key) == []  # every version: nothing left in the versioned bucket
            assert run_sync(_export_row(tenant.org_id, export_id)) is None
        assert run_sync(_chat_exists(second, temporary)) is False
    finally:
        scheduler.delete_schedule(Name=name, GroupName=group)
        get_settings.cache_clear()


def _template() -> Any:
    from pathlib import Path

    return Path(ROOT) / "template.yaml"


def _fire(target: Any) -> dict[str, int]:
    lam = boto3.client("lambda", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1")
    answer = lam.invoke(FunctionName=target["Arn"], Payload=target["Input"].encode())
    assert "FunctionError" not in answer, answer["Payload"].read()
    return dict(json.loads(answer["Payload"].read()))


def _versions(key: str) -> list[Any]:
    listed = s3().list_object_versions(Bucket=objects.bucket(), Prefix=key)
    return [v for v in [*listed.get("Versions", []), *listed.get("DeleteMarkers", [])] if v["Key"] == key]


async def _ready_export(tenant: Any) -> tuple[UUID, str]:
    from personal_agent.lifecycle import data_export_store, data_exports

    await branched_chat(tenant.org_id, tenant.user_id, "Kept a day")
    async with org_transaction(tenant.org_id) as conn:
        export = await data_export_store.insert(
            conn, tenant.org_id, tenant.user_id, "user", datetime.now(UTC) + timedelta(hours=24)
        )
    assert await data_exports.build(tenant.org_id, export.id, tenant.slug) == "ready"
    return export.id, data_exports.object_key(tenant.org_id, export.id)


async def _export_row(org_id: UUID, export_id: UUID) -> Any:
    from personal_agent.lifecycle import data_export_store

    async with org_transaction(org_id) as conn:
        return await data_export_store.get(conn, export_id)


async def _temporary_chat(tenant: Any) -> UUID:
    async with org_transaction(tenant.org_id) as conn:
        chat = await chat_store.insert_chat(conn, tenant.org_id, tenant.user_id, "Off the record")
        await policy_store.mark_temporary(conn, tenant.org_id, chat.id)
    return chat.id


async def _chat_exists(tenant: Any, chat_id: UUID) -> bool:
    async with org_transaction(tenant.org_id) as conn:
        return await chat_store.get_owned(conn, chat_id, tenant.user_id) is not None


def test_the_sweep_composes_the_chats_and_the_exports() -> None:
    assert (
        data_retention.RETENTION_SOURCE
        == json.loads(load_template(_template())["Resources"]["RetentionSchedule"]["Properties"]["Target"]["Input"])[
            "source"
        ]
    )
