"""A channel's secrets (bot tokens, Slack's signing secret, Telegram's secret token) sealed at rest as one JSON
object, the way a webhook's signing secret is (`workflows.credentials`: KMS on AWS, the local key file under
`pa dev`), bound to the org and the channel's kind. Opened only to verify a request or to send a reply; never
returned by the API, logged or put in an event."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from uuid import UUID

from personal_agent.channels.config_store import ChannelConfig, ChannelKind
from personal_agent.workflows import credentials

_NAMESPACE = uuid.UUID("6d1f4c55-2b0e-4d1e-9b5e-8a6c3f2e0c34")
_CACHE_SECONDS = 300.0
_opened: dict[tuple[UUID, str], tuple[float, dict[str, str]]] = {}


def _context(kind: ChannelKind) -> UUID:
    """The id the seal binds in beside the org (a channel is one per org and kind)."""
    return uuid.uuid5(_NAMESPACE, f"channel:{kind}")


async def seal(org_id: UUID, kind: ChannelKind, values: dict[str, str]) -> tuple[bytes, bytes, bytes | None]:
    sealed = await asyncio.to_thread(credentials.seal, org_id, _context(kind), json.dumps(values))
    return sealed.ciphertext, sealed.nonce, sealed.encrypted_data_key


async def open_secrets(config: ChannelConfig) -> dict[str, str]:
    """The channel's secrets (remembered for a few minutes per version of the config: a KMS call per request is slow
    and billed)."""
    if config.secret_ciphertext is None or config.secret_nonce is None:
        return {}
    key = (config.id, config.updated_at.isoformat())
    now = time.monotonic()
    hit = _opened.get(key)
    if hit is not None and hit[0] > now:
        return hit[1]
    sealed = credentials.Sealed(config.secret_ciphertext, config.secret_nonce, config.secret_data_key)
    text = await asyncio.to_thread(credentials.unseal, config.org_id, _context(config.kind), sealed)
    values: dict[str, str] = json.loads(text)
    _opened[key] = (now + _CACHE_SECONDS, values)
    return values
