"""An org admin's channels: set (the secrets sealed, never read back), show (which secrets are set, not their values),
remove, and the log of recent inbound messages (status and run; never their text)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.channels import config_store, thread_store
from personal_agent.channels.channel_secrets import seal
from personal_agent.channels.config_store import ChannelConfig, ChannelKind
from personal_agent.db import org_transaction
from personal_agent.errors import AppError, Conflict, InvalidInput, NotFound
from personal_agent.identity.principal import Principal
from personal_agent.settings import get_settings

SECRET_NAMES: dict[ChannelKind, tuple[str, ...]] = {
    "slack": ("bot_token", "signing_secret"),
    "telegram": ("bot_token", "secret_token"),
    "email": (),
}


async def put_channel(
    principal: Principal,
    kind: ChannelKind,
    key: str,
    agent: str | None,
    secrets: dict[str, str],
    allowed: tuple[list[str], list[UUID]] = ([], []),
) -> ChannelConfig:
    """Create or replace the org's `kind` channel; 409 `channel_taken` when another org has that workspace or
    address; 422 `unknown_member` for an allowed member id that is no member of the org (nothing is stored)."""
    sealed = await seal(principal.org_id, kind, secrets) if secrets else None
    roles, users = sorted(set(allowed[0])), list(dict.fromkeys(allowed[1]))
    async with org_transaction(principal.org_id) as conn:
        owner = await config_store.org_of(conn, kind, key)
        if owner is not None and owner != principal.org_id:
            raise Conflict(f"this {kind} channel belongs to another org", code="channel_taken")
        strangers = await config_store.non_members(conn, principal.org_id, users)
        if strangers:
            raise InvalidInput(
                "only members of the org can be allowed", code="unknown_member", ids=[str(u) for u in strangers]
            )
        return await config_store.put(conn, principal.org_id, kind, key, agent, sealed, (roles, users))


async def set_telegram_webhook(org_slug: str, bot_token: str, secret_token: str) -> None:
    """Point the org's bot at its webhook with its secret token (`setWebhook`), when the deployment knows its public
    address (`PA_PUBLIC_URL`); 502 `telegram_unreachable` otherwise nothing is stored. Without the address the admin
    runs the one `setWebhook` call docs/channels.md shows."""
    url = get_settings().public_url.rstrip("/")
    if not url:
        return
    from telegram import Bot
    from telegram.error import TelegramError

    bot = Bot(bot_token, base_url=get_settings().telegram_api_url.rstrip("/") + "/bot")
    try:
        async with bot:
            await bot.set_webhook(
                f"{url}/api/v1/channels/telegram/{org_slug}",
                secret_token=secret_token,
                allowed_updates=["message", "callback_query", "message_reaction"],
            )
    except TelegramError as exc:
        raise AppError(f"Telegram refused the webhook: {exc}", code="telegram_unreachable", status=502) from None


async def get_channel(principal: Principal, kind: ChannelKind) -> ChannelConfig:
    async with org_transaction(principal.org_id) as conn:
        config = await config_store.get(conn, kind)
    if config is None:
        raise NotFound(f"no {kind} channel is set up", code="channel_not_found")
    return config


async def list_channels(principal: Principal) -> list[ChannelConfig]:
    """The org's channels that are set up (none yet: an empty list, not an error)."""
    async with org_transaction(principal.org_id) as conn:
        found = [await config_store.get(conn, kind) for kind in ("slack", "telegram", "email")]
    return [config for config in found if config is not None]


async def delete_channel(principal: Principal, kind: ChannelKind) -> None:
    async with org_transaction(principal.org_id) as conn:
        if not await config_store.delete(conn, kind):
            raise NotFound(f"no {kind} channel is set up", code="channel_not_found")


async def recent_events(principal: Principal, kind: ChannelKind) -> list[dict[str, Any]]:
    async with org_transaction(principal.org_id) as conn:
        rows = await thread_store.recent(conn, kind)
    return [
        {"event_id": r.event_id, "sender": r.external_id, "status": r.status, "run_id": r.run_id, "at": r.created_at}
        for r in rows
    ]
