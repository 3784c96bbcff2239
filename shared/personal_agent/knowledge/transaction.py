"""The knowledge tables' transactions: the org (RLS) plus the caller as `app.current_user`, which the restrictive
policies of migration 0015 compare with a document's owner and those of 0024 with its author; an org admin's also
say so (`app.knowledge_admin`, which 0024 honours only for a member with an admin role). Only the ingest worker,
acting for whoever uploaded, opens a worker transaction."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn


@asynccontextmanager
async def knowledge_transaction(org_id: UUID, user_id: UUID | None, *, admin: bool = False) -> AsyncIterator[Conn]:
    """The org's rows that are shared or owned by `user_id` (no user: only the org's shared rows); `user_id` may
    change the rows they authored, and an org admin (`admin`) the org's too."""
    async with org_transaction(org_id) as conn:
        if user_id is not None:
            await conn.execute("SELECT set_config('app.current_user', %s, true)", [str(user_id)])
            if admin:
                await conn.execute("SELECT set_config('app.knowledge_admin', 'on', true)")
        yield conn


@asynccontextmanager
async def worker_transaction(org_id: UUID) -> AsyncIterator[Conn]:
    """Every knowledge row of the org, owned or not: for the ingest worker only."""
    async with org_transaction(org_id) as conn:
        await conn.execute("SELECT set_config('app.knowledge_worker', 'on', true)")
        yield conn
