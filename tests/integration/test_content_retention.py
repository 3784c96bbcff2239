"""Retention by classification beyond chats (issue 38): with an org's periods set (standard kept forever,
confidential 30 days, restricted 7), the sweep deletes a confidential chat's attachment (its object, every version,
from moto S3, then its row), a restricted knowledge document (object, row and chunks) and a memory of the
confidential tier, and keeps the standard ones, another org's, and the usage ledger's rows; it counts what it
deleted in its answer and in `retention_runs`."""

from __future__ import annotations

import os
from typing import Any
from uuid import UUID, uuid4

import boto3
import httpx
import psycopg
import pytest

from personal_agent.attachments import objects as attachment_objects
from personal_agent.attachments import store as attachment_store
from personal_agent.chats import store as chat_store
from personal_agent.db import org_transaction
from personal_agent.knowledge import objects
from personal_agent.knowledge import store as document_store
from personal_agent.knowledge.transaction import knowledge_transaction
from personal_agent.memories import store as memory_store
from personal_agent.settings import get_settings
from tests.auth import auth_headers

ADMIN = ("org-admin",)
DAY = 86_400


def s3() -> Any:
    return boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1")


def versions(key: str) -> list[Any]:
    listed = s3().list_object_versions(Bucket=objects.bucket(), Prefix=key)
    return [v for v in [*listed.get("Versions", []), *listed.get("DeleteMarkers", [])] if v["Key"] == key]


async def attachment_in_chat(org_id: UUID, user_id: UUID, classification: str) -> tuple[UUID, str]:
    attachment_id = uuid4()
    key = attachment_objects.object_key(org_id, attachment_id, f"{classification}.png")
    objects.put_object(key, b"\x89PNG" + os.urandom(64), "image/png")
    objects.put_object(key, b"\x89PNG" + os.urandom(64), "image/png")  # a second version
    async with org_transaction(org_id) as conn:
        chat = await chat_store.insert_chat(conn, org_id, user_id, f"A {classification} chat")
        assert await chat_store.update_owned(conn, chat.id, user_id, None, classification) is not None
        await attachment_store.insert(
            conn,
            attachment_id=attachment_id,
            org_id=org_id,
            user_id=user_id,
            chat_id=chat.id,
            kind="image",
            filename=f"{classification}.png",
            content_type="image/png",
            size=68,
            object_key=key,
        )
    return attachment_id, key


async def document(org_id: UUID, user_id: UUID, classification: str) -> tuple[UUID, str]:
    document_id = uuid4()
    key = objects.object_key(org_id, document_id, f"{classification}.txt")
    objects.put_object(key, f"a {classification} note".encode(), "text/plain")
    async with knowledge_transaction(org_id, user_id) as conn:
        await document_store.insert_document(
            conn,
            {
                "id": document_id,
                "org_id": org_id,
                "created_by": user_id,
                "owner_user_id": user_id,
                "collection": "personal",
                "filename": f"{classification}.txt",
                "content_type": "text/plain",
                "size": 20,
                "classification": classification,
                "object_key": key,
                "trusted": False,
            },
        )
    with psycopg.connect(os.environ["DATABASE_ADMIN_URL"], autocommit=True) as admin:
        admin.execute(
            "INSERT INTO knowledge_chunks (org_id, document_id, owner_user_id, collection, classification, seq, text,"
            " tokens, embedding, embedding_model, embedding_dim)"
            " VALUES (%s, %s, %s, 'personal', %s, 0, 'a note', 2, '[0.1,0.2,0.3]', 'test', 3)",
            [org_id, document_id, user_id, classification],
        )
    return document_id, key


async def memory(org_id: UUID, user_id: UUID, tier: int) -> UUID:
    async with org_transaction(org_id) as conn:
        await memory_store.as_user(conn, user_id)
        row = await memory_store.insert(conn, org_id, user_id, f"a memory of tier {tier}", content_tier=tier)
    return UUID(str(row["id"]))


def ledger_rows(org_id: UUID) -> set[tuple[Any, ...]]:
    with psycopg.connect(os.environ["DATABASE_ADMIN_URL"], autocommit=True) as admin:
        rows = admin.execute("SELECT run_id, request_index FROM usage_records WHERE org_id = %s", [org_id]).fetchall()
    return {tuple(row) for row in rows}


def count(sql: str, *args: Any) -> int:
    with psycopg.connect(os.environ["DATABASE_ADMIN_URL"], autocommit=True) as admin:
        row = admin.execute(sql, list(args)).fetchone()
    assert row is not None
    return int(row[0])


async def holdings(tenant: Any) -> dict[str, Any]:
    """One org's data of each kind and classification, and a ledger row."""
    made = {
        "attachment": await attachment_in_chat(tenant.org_id, tenant.user_id, "confidential"),
        "kept_attachment": await attachment_in_chat(tenant.org_id, tenant.user_id, "standard"),
        "document": await document(tenant.org_id, tenant.user_id, "restricted"),
        "kept_document": await document(tenant.org_id, tenant.user_id, "standard"),
        "memory": await memory(tenant.org_id, tenant.user_id, 1),
        "kept_memory": await memory(tenant.org_id, tenant.user_id, 0),
    }
    with psycopg.connect(os.environ["DATABASE_ADMIN_URL"], autocommit=True) as admin:
        admin.execute(
            "INSERT INTO usage_records (org_id, run_id, request_index, model_name) VALUES (%s, %s, 0, 'm')",
            [tenant.org_id, uuid4()],
        )
    return made


def present(made: dict[str, Any]) -> dict[str, bool]:
    """Whether each thing is still there: its row, and for files every version of its object."""
    seen = {
        "attachment": count("SELECT count(*) FROM attachments WHERE id = %s", made["attachment"][0]) == 1,
        "kept_attachment": count("SELECT count(*) FROM attachments WHERE id = %s", made["kept_attachment"][0]) == 1,
        "document": count("SELECT count(*) FROM knowledge_documents WHERE id = %s", made["document"][0]) == 1,
        "kept_document": count("SELECT count(*) FROM knowledge_documents WHERE id = %s", made["kept_document"][0]) == 1,
        "memory": count("SELECT count(*) FROM memories WHERE id = %s", made["memory"]) == 1,
        "kept_memory": count("SELECT count(*) FROM memories WHERE id = %s", made["kept_memory"]) == 1,
    }
    for kind in ("attachment", "kept_attachment", "document", "kept_document"):
        assert bool(versions(made[kind][1])) == seen[kind], f"{kind}: the object and the row disagree"
    return seen


async def test_the_sweep_deletes_attachments_documents_and_memories_by_classification(
    client: httpx.AsyncClient, make_tenant: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    boss, other = make_tenant(ADMIN), make_tenant(ADMIN)
    policy = {"allow_public_shares": False, "temporary_hours": 24, "confidential_days": 30, "restricted_days": 7}
    put = await client.put("/api/v1/admin/retention", headers=auth_headers(boss, ADMIN), json=policy)
    assert put.status_code == 200, put.text
    mine, theirs = await holdings(boss), await holdings(other)
    ledger = ledger_rows(boss.org_id)

    swept = await client.post("/api/v1/admin/retention/run", headers=auth_headers(boss, ADMIN))
    assert swept.status_code == 200, swept.text
    assert all(present(mine).values())  # nothing is old enough yet

    monkeypatch.setenv("PA_RETENTION_CLOCK_SKEW_SECONDS", str(31 * DAY))
    get_settings.cache_clear()
    try:
        swept = await client.post("/api/v1/admin/retention/run", headers=auth_headers(boss, ADMIN))
    finally:
        monkeypatch.delenv("PA_RETENTION_CLOCK_SKEW_SECONDS")
        get_settings.cache_clear()
    assert swept.status_code == 200, swept.text
    counts = swept.json()
    assert (counts["expired_attachments"], counts["expired_documents"], counts["expired_memories"]) == (1, 1, 1)
    assert counts["expired_chats"] == 1  # the confidential chat itself

    assert present(mine) == {
        "attachment": False,
        "kept_attachment": True,
        "document": False,
        "kept_document": True,
        "memory": False,
        "kept_memory": True,
    }
    assert count("SELECT count(*) FROM knowledge_chunks WHERE document_id = %s", mine["document"][0]) == 0
    assert count("SELECT count(*) FROM knowledge_chunks WHERE document_id = %s", mine["kept_document"][0]) == 1
    assert all(present(theirs).values())  # another org, with no periods set: untouched
    # Every ledger row stays (the ingest of a document put above may meter its embedding meanwhile: one more).
    assert ledger and ledger <= ledger_rows(boss.org_id)
    recorded = count(
        "SELECT coalesce(sum(expired_attachments + expired_documents + expired_memories), 0) FROM retention_runs"
        " WHERE org_id = %s",
        boss.org_id,
    )
    assert recorded == 3
