"""Personal access tokens: `pa_pat_…` secrets shown once, stored as SHA-256, bound to one org.

The secret has 256 bits of entropy, so a fast hash is enough (nothing to brute-force). A token is
found before its org is known through the `token_lookup` RLS policy, which shows the one row whose
hash the caller puts in `app.token_hash`. Every use re-reads the row, so a revocation or an expiry
takes effect on the very next request; the effective roles are the token's roles that the user
still holds in the org. A token whose owner was disabled, or whose membership was disabled or
removed, is refused on its next use too (removal also revokes the owner's tokens in that org).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import org_transaction, system_transaction
from personal_agent.errors import Forbidden, NotFound, Unauthorized
from personal_agent.identity import api_token_store, membership_store
from personal_agent.identity.auth_cache import revoked
from personal_agent.identity.claims import ROLES, normalize_org
from personal_agent.identity.directory import membership_refusal, user_refusal
from personal_agent.identity.principal import Principal

PAT_PREFIX = "pa_pat_"
_DISPLAY_CHARS = 12


def hash_token(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class PersonalAccessToken:
    """A stored token as its owner may see it (never the secret or its hash)."""

    id: UUID
    name: str
    prefix: str
    org_slug: str
    roles: list[str]
    expires_at: datetime | None
    revoked_at: datetime | None
    last_used_at: datetime | None
    created_at: datetime


def _token(row: dict[str, Any]) -> PersonalAccessToken:
    return PersonalAccessToken(**{k: row[k] for k in PersonalAccessToken.__dataclass_fields__})


async def create_token(
    principal: Principal, name: str, *, roles: list[str] | None = None, expires_at: datetime | None = None
) -> tuple[PersonalAccessToken, str]:
    """A new token for the caller in the caller's current org; returns it and the secret (shown once)."""
    if principal.via == "pat":
        raise Forbidden("a personal access token cannot create tokens; sign in", code="pat_cannot_create_tokens")
    wanted = set(roles) if roles else set(principal.roles)
    if not wanted <= principal.roles:
        raise Forbidden("a token cannot hold roles its owner does not", code="role_not_held")
    secret = PAT_PREFIX + secrets.token_urlsafe(32)
    async with org_transaction(principal.org_id) as conn:
        row = await api_token_store.insert(
            conn,
            principal.org_id,
            principal.user_id,
            name,
            hash_token(secret),
            secret[:_DISPLAY_CHARS],
            [r for r in ROLES if r in wanted],
            expires_at,
        )
    return _token(row), secret


async def list_tokens(principal: Principal) -> list[PersonalAccessToken]:
    """The caller's tokens in the current org, newest first (revoked ones included, marked)."""
    async with org_transaction(principal.org_id) as conn:
        rows = await api_token_store.of_user(conn, principal.user_id)
    return [_token(r) for r in rows]


async def revoke_token(principal: Principal, token_id: UUID) -> None:
    """Revoke one of the caller's tokens (org admins may revoke any in their org); 404 if not visible."""
    async with org_transaction(principal.org_id) as conn:
        if not await api_token_store.revoke(conn, token_id, principal.user_id, anyones=principal.is_org_admin):
            raise NotFound("no such token", code="token_not_found")
    await revoked()


async def authenticate_token(secret: str, x_org: str | None) -> Principal:
    """The principal a personal access token stands for, or 401/403 with a stable code."""
    async with system_transaction() as conn:
        row = await api_token_store.by_hash(conn, hash_token(secret))
    if row is None:
        raise Unauthorized("unknown personal access token", code="unknown_token")
    if row["revoked"]:
        raise Unauthorized("this personal access token was revoked", code="token_revoked")
    if row["expired"]:
        raise Unauthorized("this personal access token has expired", code="token_expired")
    if row["user_disabled"]:
        raise user_refusal()
    if x_org is not None and x_org.strip() and normalize_org(x_org) != row["slug"]:
        raise Forbidden("a personal access token acts only in its own org", code="org_not_granted")
    async with org_transaction(row["org_id"]) as conn:
        member = await membership_store.roles_and_status(conn, row["org_id"], row["user_id"])
        if member is None:
            raise Forbidden("the token's owner is no longer a member of its org", code="not_a_member")
        if member["status"] != "active":
            raise membership_refusal(member["status"])
        await api_token_store.mark_used(conn, row["id"])
    roles = frozenset(row["roles"]) & frozenset(member["roles"]) or frozenset({"user"})
    return Principal(
        user_id=row["user_id"],
        org_id=row["org_id"],
        org_slug=row["slug"],
        roles=roles,
        subject=row["subject"],
        via="pat",
        orgs=(row["slug"],),
    )
