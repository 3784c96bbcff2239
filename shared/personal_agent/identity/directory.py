"""Users, orgs and memberships as authentication needs them: upsert on first token, resolve the org.

A token's org claim is authoritative for which orgs it grants; when a token has no org claim,
the user's existing memberships (then PA_OIDC_DEFAULT_ORG) decide. A token's roles claim, when
present, is written to the membership so the database mirrors the identity provider; without
one, the membership's stored roles apply (`user` for a new membership).
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from personal_agent.db.pool import Conn, system_transaction
from personal_agent.errors import Forbidden
from personal_agent.identity.claims import ROLES, normalize_org, read_grant
from personal_agent.identity.oidc import VerifiedToken
from personal_agent.identity.principal import Principal
from personal_agent.settings import get_settings


def _sorted_roles(roles: Sequence[str] | frozenset[str]) -> list[str]:
    return [r for r in ROLES if r in roles]


async def _upsert_user(conn: Conn, issuer: str, subject: str, email: str | None, name: str | None) -> UUID:
    row = await (
        await conn.execute(
            "SELECT id, email, display_name FROM users WHERE issuer = %s AND subject = %s", [issuer, subject]
        )
    ).fetchone()
    if row is None:
        row = await (
            await conn.execute(
                "INSERT INTO users (issuer, subject, email, display_name) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT (issuer, subject) DO UPDATE SET email = users.email"
                " RETURNING id, email, display_name",
                [issuer, subject, email, name],
            )
        ).fetchone()
        assert row is not None
    elif (email and row["email"] != email) or (name and row["display_name"] != name):
        await conn.execute(
            "UPDATE users SET email = COALESCE(%s, email), display_name = COALESCE(%s, display_name) WHERE id = %s",
            [email, name, row["id"]],
        )
    user_id: UUID = row["id"]
    return user_id


async def _member_org_slugs(conn: Conn, user_id: UUID) -> list[str]:
    # The membership_lookup policy shows this user's memberships while app.auth_user is set.
    await conn.execute("SELECT set_config('app.auth_user', %s, true)", [str(user_id)])
    rows = await (
        await conn.execute(
            "SELECT o.slug FROM memberships m JOIN orgs o ON o.id = m.org_id"
            " WHERE m.user_id = %s ORDER BY m.created_at, o.slug",
            [user_id],
        )
    ).fetchall()
    await conn.execute("SELECT set_config('app.auth_user', '', true)")
    return [r["slug"] for r in rows]


async def _org_id(conn: Conn, slug: str, *, create: bool) -> UUID:
    row = await (await conn.execute("SELECT id FROM orgs WHERE slug = %s", [slug])).fetchone()
    if row is None and create:
        await conn.execute("INSERT INTO orgs (slug, name) VALUES (%s, %s) ON CONFLICT (slug) DO NOTHING", [slug, slug])
        row = await (await conn.execute("SELECT id FROM orgs WHERE slug = %s", [slug])).fetchone()
    if row is None:
        raise Forbidden(f"the org {slug!r} does not exist", code="unknown_org")
    org_id: UUID = row["id"]
    return org_id


def choose_org(granted: Sequence[str], x_org: str | None) -> str:
    """The org a request acts in: `X-Org` if the token grants it, else the token's default org."""
    if x_org is not None and x_org.strip():
        wanted = normalize_org(x_org)
        if wanted is None or wanted not in granted:
            raise Forbidden("the token does not grant the org named in X-Org", code="org_not_granted")
        return wanted
    if not granted:
        raise Forbidden("the token grants no org", code="no_org")
    return granted[0]


async def principal_for_token(verified: VerifiedToken, x_org: str | None) -> Principal:
    """The principal for a verified OIDC token: user upserted, org chosen and checked, roles resolved."""
    settings = get_settings()
    grant = read_grant(verified.claims, verified.issuer.mapping)
    email = verified.claims.get("email")
    name = verified.claims.get("name") or verified.claims.get("preferred_username")
    async with system_transaction() as conn:
        user_id = await _upsert_user(
            conn,
            verified.issuer.issuer,
            verified.subject,
            email if isinstance(email, str) else None,
            name if isinstance(name, str) else None,
        )
        from_token = grant.orgs is not None
        granted = list(grant.orgs or ()) if from_token else await _member_org_slugs(conn, user_id)
        if not from_token and not granted and settings.oidc_default_org:
            default = normalize_org(settings.oidc_default_org)
            granted, from_token = ([default], True) if default else ([], False)
        slug = choose_org(granted, x_org)
        org_id = await _org_id(conn, slug, create=from_token and settings.auto_create_orgs)
        await conn.execute("SELECT set_config('app.current_org', %s, true)", [str(org_id)])
        roles = await _sync_membership(conn, org_id, user_id, grant.roles)
    return Principal(
        user_id=user_id,
        org_id=org_id,
        org_slug=slug,
        roles=roles,
        subject=verified.subject,
        via="oidc",
        orgs=tuple(dict.fromkeys([slug, *granted])),
    )


async def _sync_membership(
    conn: Conn, org_id: UUID, user_id: UUID, token_roles: frozenset[str] | None
) -> frozenset[str]:
    # Read first: the common case (nothing changed) takes no row lock and writes nothing.
    row = await (
        await conn.execute("SELECT roles FROM memberships WHERE org_id = %s AND user_id = %s", [org_id, user_id])
    ).fetchone()
    stored: list[str] | None = row["roles"] if row else None
    if token_roles is None:
        if stored is not None:
            return frozenset(stored)
        wanted = ["user"]
    else:
        wanted = _sorted_roles(token_roles) or ["user"]
        if stored is not None and sorted(stored) == sorted(wanted):
            return frozenset(stored)
    await conn.execute(
        "INSERT INTO memberships (org_id, user_id, roles) VALUES (%s, %s, %s)"
        " ON CONFLICT (org_id, user_id) DO UPDATE SET roles = EXCLUDED.roles",
        [org_id, user_id, wanted],
    )
    return frozenset(wanted)


async def list_members(org_id: UUID) -> list[dict[str, object]]:
    """The org's members with their user details, oldest membership first."""
    from personal_agent.db.pool import org_transaction

    async with org_transaction(org_id) as conn:
        rows = await (
            await conn.execute(
                "SELECT m.user_id, u.subject, u.email, u.display_name, m.roles, m.created_at"
                " FROM memberships m JOIN users u ON u.id = m.user_id ORDER BY m.created_at, u.subject"
            )
        ).fetchall()
    return [dict(r) for r in rows]
