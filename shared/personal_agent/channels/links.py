"""A member's linked channel accounts: confirm a one-time code (the sender it was given to becomes theirs), list,
unlink."""

from __future__ import annotations

from personal_agent.channels import link_store
from personal_agent.channels.config_store import ChannelKind
from personal_agent.db import org_transaction
from personal_agent.errors import NotFound
from personal_agent.identity.principal import Principal


async def confirm(principal: Principal, code: str) -> link_store.ChannelLink:
    """Link the code's sender to the caller; 404 `link_code_invalid` for a code that is unknown in the caller's org,
    used or expired (nothing is stored)."""
    async with org_transaction(principal.org_id) as conn:
        taken = await link_store.take_code(conn, code.strip().upper())
        if taken is None:
            raise NotFound("this code is unknown, used or expired", code="link_code_invalid")
        return await link_store.link(conn, principal.org_id, taken, principal.user_id)


async def list_links(principal: Principal) -> list[link_store.ChannelLink]:
    async with org_transaction(principal.org_id) as conn:
        return await link_store.links_of(conn, principal.user_id)


async def unlink(principal: Principal, kind: ChannelKind, external_id: str) -> None:
    async with org_transaction(principal.org_id) as conn:
        if not await link_store.unlink(conn, principal.user_id, kind, external_id):
            raise NotFound("no such linked account", code="channel_link_not_found")
