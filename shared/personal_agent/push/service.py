"""The caller's own push subscriptions for the API: the server's key, subscribe (the browser's
`PushSubscription.toJSON()`), list, remove. Another person's subscription (or another org's) is a 404."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.errors import Conflict, InvalidInput, NotFound
from personal_agent.identity.principal import Principal
from personal_agent.push import store
from personal_agent.settings import get_settings


def config() -> dict[str, Any]:
    key = get_settings().vapid_public_key
    return {"enabled": bool(key), "public_key": key or None}


def view(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": str(row["id"]), "endpoint": row["endpoint"], "created_at": row["created_at"].isoformat()}


def _invalid(message: str) -> InvalidInput:
    return InvalidInput(message, code="invalid_push_subscription")


def check_endpoint(endpoint: str) -> str:
    """A push endpoint is an https URL on a browser push service (or a host the operator added, see
    `push_services`); where it may connect is checked again when a message is sent, as for every outbound URL."""
    from personal_agent.push.push_services import refusal

    reason = refusal(endpoint)
    if reason is not None:
        raise _invalid(reason)
    return endpoint.strip()


def check_keys(p256dh: str, auth: str) -> None:
    """`p256dh` must be a P-256 public key (uncompressed point) and `auth` a 16-byte secret, both base64url."""
    from cryptography.hazmat.primitives.asymmetric import ec  # not in the API's cold start

    from personal_agent.push.vapid import b64url_decode

    try:
        secret = b64url_decode(auth)
    except ValueError:
        secret = b""
    if len(secret) != 16:
        raise _invalid("keys.auth must be the browser's 16-byte auth secret (base64url)")
    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64url_decode(p256dh))
    except ValueError:
        raise _invalid("keys.p256dh must be the browser's P-256 public key (base64url)") from None


async def subscribe(principal: Principal, endpoint: str, p256dh: str, auth: str) -> tuple[dict[str, Any], bool]:
    if not get_settings().vapid_public_key:
        raise Conflict("web push is not configured on this server", code="push_not_configured")
    endpoint = check_endpoint(endpoint)
    check_keys(p256dh, auth)
    async with org_transaction(principal.org_id) as conn:
        await store.as_user(conn, principal.user_id)
        row, created = await store.upsert(conn, principal.org_id, principal.user_id, endpoint, p256dh, auth)
    return view(row), created


async def list_subscriptions(principal: Principal) -> dict[str, Any]:
    async with org_transaction(principal.org_id) as conn:
        await store.as_user(conn, principal.user_id)
        rows = await store.list_own(conn, principal.user_id)
    return {"items": [view(r) for r in rows]}


async def unsubscribe(principal: Principal, subscription_id: UUID) -> None:
    async with org_transaction(principal.org_id) as conn:
        await store.as_user(conn, principal.user_id)
        deleted = await store.delete(conn, subscription_id, principal.user_id)
    if not deleted:
        raise NotFound("push subscription not found", code="push_subscription_not_found")
