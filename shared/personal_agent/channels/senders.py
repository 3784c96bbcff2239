"""Who a channel's sender is: the org member their channel account is linked to (once, by a one-time code the member
confirms in the web chat), as the principal a run or a decision acts for. An unlinked sender gets a code, and
nothing else happens."""

from __future__ import annotations

import secrets
from uuid import UUID

from personal_agent.channels import config_store, link_store
from personal_agent.channels.config_store import ChannelKind
from personal_agent.db.pool import Conn
from personal_agent.errors import AppError, Forbidden
from personal_agent.identity.members import check_member_active
from personal_agent.identity.membership_store import roles_and_status
from personal_agent.identity.principal import Principal

CODE_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ23456789"
CODE_CHARS = 8
CODE_VALID_SECONDS = 15 * 60


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_CHARS))


async def link_code(conn: Conn, org_id: UUID, kind: ChannelKind, sender: str, label: str) -> str:
    """The sender's one-time code: the one still valid, else a new one (valid 15 minutes)."""
    code = await link_store.live_code(conn, kind, sender)
    if code is None:
        code = new_code()
        await link_store.insert_code(conn, org_id, code, kind, sender, label, CODE_VALID_SECONDS)
    return code


def connect_text(code: str) -> str:
    return (
        f"Connect your account first: in Personal Agent open Settings → Channels and enter the code {code}"
        " (valid 15 minutes). Then send your message again."
    )


async def member(conn: Conn, org_id: UUID, kind: ChannelKind, sender: str) -> Principal | None:
    """The active member the sender is linked to (None: not linked). 403 for a member who is disabled or removed,
    or outside the channel's allow-list (`channel_not_allowed`)."""
    user_id = await link_store.linked_user(conn, kind, sender)
    if user_id is None:
        return None
    await check_member_active(conn, user_id)
    membership = await roles_and_status(conn, org_id, user_id)
    slug = await (await conn.execute("SELECT slug FROM orgs WHERE id = %s", [org_id])).fetchone()
    assert membership is not None and slug is not None  # check_member_active found them active
    config = await config_store.get(conn, kind)
    if config is not None and not config.allows(user_id, frozenset(membership["roles"])):
        raise Forbidden(f"this {kind} channel is not open to you; ask an org admin", code="channel_not_allowed")
    return Principal(
        user_id=user_id,
        org_id=org_id,
        org_slug=slug["slug"],
        roles=frozenset(membership["roles"]),
        subject=f"{kind}:{sender}",
    )


def refusal_text(exc: AppError) -> str:
    return f"Sorry, this can't be done: {exc}"
