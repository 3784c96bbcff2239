"""Finding the org and the channel config an inbound request belongs to, and its opened secrets."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from personal_agent.channels import config_store
from personal_agent.channels.channel_secrets import open_secrets
from personal_agent.channels.config_store import ChannelConfig, ChannelKind
from personal_agent.db import org_transaction
from personal_agent.db.pool import system_transaction


@dataclass(frozen=True)
class Opened:
    config: ChannelConfig
    secrets: dict[str, str]


async def of_org(org_id: UUID, kind: ChannelKind) -> Opened | None:
    async with org_transaction(org_id) as conn:
        config = await config_store.get(conn, kind)
    if config is None:
        return None
    return Opened(config, await open_secrets(config))


async def by_key(kind: ChannelKind, key: str) -> Opened | None:
    """The channel whose workspace or address is `key` (a Slack team id, an inbound e-mail address)."""
    async with system_transaction() as conn:
        org_id = await config_store.org_of(conn, kind, key)
    return await of_org(org_id, kind) if org_id else None


async def by_slug(kind: ChannelKind, org_slug: str) -> Opened | None:
    async with system_transaction() as conn:
        row = await (await conn.execute("SELECT id FROM orgs WHERE slug = %s", [org_slug])).fetchone()
    return await of_org(row["id"], kind) if row else None


async def all_of(kind: ChannelKind) -> list[Opened]:
    async with system_transaction() as conn:
        orgs = await config_store.orgs_with(conn, kind)
    found = [await of_org(org_id, kind) for org_id in orgs]
    return [o for o in found if o is not None]
