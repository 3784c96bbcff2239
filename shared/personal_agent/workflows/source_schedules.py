"""When a knowledge source syncs by itself: its `every`, an EventBridge Scheduler expression validated and evaluated
like a workflow's schedule (`schedule_expressions.py`). On AWS an EventBridge schedule per source sends the sync
job straight to the ingest queue; the dev server's `local/source_scheduler.py` does it from `next_sync_at`. Either
way the sync runs in the ingest function. Creating and deleting a source goes through here, so its schedule
follows (knowledge sits below workflows and cannot reach the expressions)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from personal_agent.knowledge import sources
from personal_agent.knowledge.sources_store import Source
from personal_agent.settings import get_settings
from personal_agent.workflows.schedule_expressions import parse_schedule
from personal_agent.workflows.schedules import scheduler_client


def next_sync(every: str | None, after: datetime, anchor: datetime | None = None) -> datetime | None:
    """The next sync time after `after` (a rate counts from `anchor`, the previous due time, so its times stay on
    one grid); 422 `invalid_schedule_expression` for a bad `every`."""
    if every is None:
        return None
    return parse_schedule(every, "UTC").next_after(after, anchor=anchor or after)


def schedule_name(source_id: UUID) -> str:
    return f"pa-ks-{source_id}"


def queue_arn() -> str | None:
    """The ingest queue's ARN, from its URL (`https://sqs.<region>…/<account>/<name>`)."""
    url = get_settings().ingest_queue_url
    if not url:
        return None
    account, name = url.rstrip("/").rsplit("/", 2)[-2:]
    return f"arn:aws:sqs:{get_settings().aws_region}:{account}:{name}"


def _scheduler() -> Any:
    return scheduler_client()


def put_schedule(org_id: UUID, source_id: UUID, every: str) -> None:
    """Create or update the source's EventBridge schedule (blocking); nothing without a scheduler role."""
    from personal_agent.knowledge.source_events import sync_job_body

    settings, arn = get_settings(), queue_arn()
    if not settings.scheduler_role_arn or arn is None:
        return
    client = _scheduler()
    if settings.is_local:
        try:
            client.get_schedule_group(Name=settings.schedule_group)
        except client.exceptions.ResourceNotFoundException:
            client.create_schedule_group(Name=settings.schedule_group)
    args = {
        "Name": schedule_name(source_id),
        "GroupName": settings.schedule_group,
        "ScheduleExpression": every,
        "FlexibleTimeWindow": {"Mode": "OFF"},
        "Target": {"Arn": arn, "RoleArn": settings.scheduler_role_arn, "Input": sync_job_body(org_id, source_id)},
        "Description": f"Personal Agent knowledge source {source_id}",
    }
    try:
        client.update_schedule(**args)
    except client.exceptions.ResourceNotFoundException:
        client.create_schedule(**args)


def delete_schedule(source_id: UUID) -> None:
    if not get_settings().scheduler_role_arn:
        return
    client = _scheduler()
    try:
        client.delete_schedule(Name=schedule_name(source_id), GroupName=get_settings().schedule_group)
    except client.exceptions.ResourceNotFoundException:
        pass


async def create_source(org_id: UUID, user_id: UUID, body: sources.SourceIn) -> Source:
    """The source with its next sync from `every` (422 for a bad expression, before anything is stored) and its
    EventBridge schedule; a schedule AWS refuses removes the source again."""
    every = body.every.strip() if body.every else None
    next_at = next_sync(every, datetime.now(UTC))
    source = await sources.create(org_id, user_id, body, next_at)
    if every is not None:
        try:
            await asyncio.to_thread(put_schedule, org_id, source.id, every)
        except Exception:
            await sources.delete(org_id, user_id, source.id)
            raise
    await asyncio.to_thread(sources.send_sync, org_id, source.id)
    return source


async def delete_source(org_id: UUID, user_id: UUID, source_id: UUID) -> None:
    await sources.delete(org_id, user_id, source_id)
    await asyncio.to_thread(delete_schedule, source_id)


async def delete_collection(org_id: UUID, user_id: UUID, collection_id: UUID, *, admin: bool) -> None:
    """Delete a collection (its sources go with it) and then its sources' schedules."""
    from personal_agent.knowledge import collections, sources_store
    from personal_agent.knowledge.transaction import knowledge_transaction

    async with knowledge_transaction(org_id, user_id, admin=admin) as conn:
        scheduled = [s.id for s in await sources_store.list_in(conn, [collection_id]) if s.every]
    await collections.delete(org_id, user_id, collection_id, admin=admin)
    for source_id in scheduled:
        await asyncio.to_thread(delete_schedule, source_id)
