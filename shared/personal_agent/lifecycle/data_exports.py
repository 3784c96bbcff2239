"""Data exports in the background (issue 38): `request` records the export (202 to the caller) and hands it to the
data jobs function (an asynchronous invoke; with no function named, a thread of this process); `build` writes the
ZIP (`user_data.write_archive`) straight into the documents bucket under `exports/{org}/{id}.zip` in parts, so
neither Lambda's 6 MB response nor its memory bounds it; `status` answers the caller's poll with a short-lived
presigned GET once it is ready. An export lives `EXPIRES_HOURS`; the retention sweep deletes its object and row."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.errors import NotFound
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle import data_export_store as store
from personal_agent.lifecycle.data_export_store import DataExport
from personal_agent.lifecycle.user_data import Scope
from personal_agent.settings import get_settings

log = logging.getLogger("personal_agent.lifecycle.data_exports")

EXPIRES_HOURS = 24
# An export still pending or running after this long is taken as lost: a new request starts another.
REUSE_MINUTES = 15
JOB_KEY = "pa_export"
BATCH = 200


def object_key(org_id: UUID, export_id: UUID) -> str:
    return f"exports/{org_id}/{export_id}.zip"


async def request(principal: Principal, scope: Scope) -> DataExport:
    """Record an export of the caller's data (or, `org`, the org's) and start building it; an unfinished one
    the caller asked for in the last minutes is answered instead of starting a second."""
    now = datetime.now(UTC)
    async with org_transaction(principal.org_id) as conn:
        running = await store.unfinished(conn, principal.user_id, scope, now - timedelta(minutes=REUSE_MINUTES))
        if running is not None:
            return running
        export = await store.insert(
            conn, principal.org_id, principal.user_id, scope, now + timedelta(hours=EXPIRES_HOURS)
        )
    await dispatch(principal.org_id, export.id, principal.org_slug)
    return export


async def status(principal: Principal, scope: Scope, export_id: UUID) -> dict[str, Any]:
    """The export as its maker sees it, with a presigned download once ready; 404 for anyone else's."""
    async with org_transaction(principal.org_id) as conn:
        export = await store.get(conn, export_id)
    if export is None or export.user_id != principal.user_id or export.scope != scope:
        raise NotFound("export not found", code="export_not_found")
    view: dict[str, Any] = {
        "id": export.id,
        "status": export.status,
        "scope": export.scope,
        "created_at": export.created_at,
        "finished_at": export.finished_at,
        "expires_at": export.expires_at,
        "size_bytes": export.size_bytes,
        "error": export.error,
        "download_url": None,
        "download_expires_in": None,
    }
    if export.status == "ready" and export.object_key and export.expires_at > datetime.now(UTC):
        from personal_agent.knowledge import objects

        name = f"personal-agent-{'org-' if scope == 'org' else ''}export-{export.created_at:%Y%m%d}.zip"
        got = objects.presigned_download(export.object_key, "application/zip", f'attachment; filename="{name}"')
        view["download_url"], view["download_expires_in"] = got["url"], got["expires_in"]
    return view


def job_event(org_id: UUID, export_id: UUID, org_slug: str) -> dict[str, Any]:
    return {JOB_KEY: {"org_id": str(org_id), "export_id": str(export_id), "org_slug": org_slug}}


async def dispatch(org_id: UUID, export_id: UUID, org_slug: str) -> None:
    """Hand the build to the data jobs function (never waits for it)."""
    function = get_settings().export_function
    if function:
        from personal_agent.aws_clients import aws_client

        payload = json.dumps(job_event(org_id, export_id, org_slug)).encode()
        await asyncio.to_thread(
            aws_client("lambda").invoke, FunctionName=function, InvocationType="Event", Payload=payload
        )
        return
    from personal_agent.runtime import run_sync

    # No function: a thread of this process with its own loop (the build's S3 writes block).
    task = asyncio.get_running_loop().create_task(
        asyncio.to_thread(lambda: run_sync(build(org_id, export_id, org_slug)))
    )
    _running.add(task)
    task.add_done_callback(_running.discard)


_running: set[asyncio.Task[Any]] = set()


async def run_job(event: dict[str, Any]) -> dict[str, Any]:
    """The data jobs function's side of `dispatch`."""
    job = event[JOB_KEY]
    outcome = await build(UUID(job["org_id"]), UUID(job["export_id"]), str(job.get("org_slug", "")))
    return {"export_id": job["export_id"], "status": outcome}


async def build(org_id: UUID, export_id: UUID, org_slug: str) -> str:
    """Write the export's ZIP into the bucket and mark it ready (or failed); its status. A second delivery of the
    same job finds it no longer pending and does nothing."""
    from personal_agent.lifecycle.user_data import write_archive

    async with org_transaction(org_id) as conn:
        export = await store.start(conn, export_id)
    if export is None:
        return "skipped"
    key = object_key(org_id, export_id)
    try:
        from personal_agent.knowledge import objects
        from personal_agent.lifecycle.export_upload import S3ObjectWriter

        writer = S3ObjectWriter(objects.client(), objects.bucket(), key, "application/zip")
        with writer:
            scope: Scope = "org" if export.scope == "org" else "user"
            await write_archive(org_id, export.user_id, scope, org_slug, writer)  # type: ignore[arg-type]
    except Exception as exc:
        log.exception("export %s failed", export_id)
        async with org_transaction(org_id) as conn:
            await store.fail(conn, export_id, type(exc).__name__)
        return "failed"
    async with org_transaction(org_id) as conn:
        await store.finish(conn, export_id, key, writer.size)
    log.info("export %s ready: %d bytes, at most %d held", export_id, writer.size, writer.peak_buffer)
    return "ready"


async def expire(org_id: UUID, now: datetime) -> int:
    """Delete the org's exports past their time, objects first (every version); how many."""
    from personal_agent.knowledge import objects

    deleted = 0
    while True:
        async with org_transaction(org_id) as conn:
            due = await store.expired(conn, now, BATCH)
        for export in due:
            if export.object_key:
                await asyncio.to_thread(objects.delete_every_version, export.object_key)
        async with org_transaction(org_id) as conn:
            deleted += await store.delete(conn, [e.id for e in due])
        if len(due) < BATCH:
            return deleted
