"""Users, orgs and memberships as authentication needs them: upsert on first token, resolve the org.

The rule is per issuer mapping (identity.claims). An issuer configured with an org claim (the
default, `org`) is the only source of the orgs a token grants: a token without the claim (Cognito
omits `cognito:groups` when the user is in no group) grants none, and stored memberships never fill
the gap. Only an issuer configured without one (`PA_OIDC_ORG_CLAIM=`) leaves it to the user's active
memberships, oldest first. Either way, a token that ends up granting no org acts in
PA_OIDC_DEFAULT_ORG when that is set, else it is refused (`no_org`). Roles follow the same rule: a
configured roles claim is written to the membership on every request (missing means `user`); only an
issuer without one keeps the stored roles.

Offboarding is sticky: a membership an org admin disabled or removed is never re-activated by a
token that still names the org (403 `membership_disabled` / `not_a_member`; the org is dropped from
the orgs the credential may switch to), and a disabled user is refused everywhere (`user_disabled`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from uuid import UUID

from personal_agent.db.pool import Conn, system_transaction
from personal_agent.errors import Forbidden
from personal_agent.identity import membership_store, org_store, user_store
from personal_agent.identity.claims import ROLES, Grant, normalize_org, read_grant
from personal_agent.identity.oidc import VerifiedToken
from personal_agent.identity.principal import Principal
from personal_agent.settings import get_settings

_REFUSALS = {
    "disabled": ("your membership in this org is disabled", "membership_disabled"),
    "removed": ("you are no longer a member of this org", "not_a_member"),
}


def membership_refusal(status: str) -> Forbidden:
    """The 403 for a membership that is not active (`disabled` or `removed`)."""
    message, code = _REFUSALS.get(status, _REFUSALS["removed"])
    return Forbidden(message, code=code)


def user_refusal() -> Forbidden:
    return Forbidden("this account is disabled", code="user_disabled")


def _sorted_roles(roles: Sequence[str] | frozenset[str]) -> list[str]:
    return [r for r in ROLES if r in roles]


async def _upsert_user(conn: Conn, issuer: str, subject: str, email: str | None, name: str | None) -> UUID:
    """The user's id, created on first sight; `user_disabled` for an account a platform admin disabled."""
    row = await user_store.by_identity(conn, issuer, subject)
    if row is None:
        row = await user_store.insert(conn, issuer, subject, email, name)
    if row["disabled_at"] is not None:
        raise user_refusal()
    if (email and row["email"] != email) or (name and row["display_name"] != name):
        await user_store.update_profile(conn, row["id"], email, name)
    user_id: UUID = row["id"]
    return user_id


def _granted_orgs(grant: Grant, states: Mapping[str, str]) -> tuple[list[str], bool]:
    """The orgs the credential grants, and whether they were named (by the token or the default org, so
    they may be created) rather than read from the user's active memberships."""
    if grant.orgs is not None:
        granted, named = list(grant.orgs), True
    else:
        granted, named = [slug for slug, status in states.items() if status == "active"], False
    if not granted:
        default = normalize_org(get_settings().oidc_default_org or "")
        if default:
            return [default], True
    return granted, named


async def _org_id(conn: Conn, slug: str, *, create: bool) -> UUID:
    org_id = await (org_store.ensure(conn, slug) if create else org_store.id_of(conn, slug))
    if org_id is None:
        raise Forbidden(f"the org {slug!r} does not exist", code="unknown_org")
    return org_id


async def ensure_org(slug: str) -> UUID:
    """The id of the org `slug`, created if it does not exist (local mode: `pa dev` seeds its demo org)."""
    async with system_transaction() as conn:
        return await _org_id(conn, slug, create=True)


def choose_org(granted: Sequence[str], x_org: str | None, blocked: Mapping[str, str] | None = None) -> str:
    """The org a request acts in: `X-Org` if the credential grants it, else the first granted org the
    user is not offboarded from (`blocked`: slug -> membership status)."""
    blocked = blocked or {}
    if x_org is not None and x_org.strip():
        wanted = normalize_org(x_org)
        if wanted is None or wanted not in granted:
            raise Forbidden("the token does not grant the org named in X-Org", code="org_not_granted")
        if wanted in blocked:
            raise membership_refusal(blocked[wanted])
        return wanted
    usable = [slug for slug in granted if slug not in blocked]
    if usable:
        return usable[0]
    if granted:
        raise membership_refusal(blocked[granted[0]])
    raise Forbidden("the token grants no org", code="no_org")


async def principal_for_token(verified: VerifiedToken, x_org: str | None) -> Principal:
    """The principal for a verified OIDC token: user upserted, org chosen and checked, roles resolved."""
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
        states = await membership_store.states_of_user(conn, user_id)
        blocked = {slug: status for slug, status in states.items() if status != "active"}
        granted, named = _granted_orgs(grant, states)
        slug = choose_org(granted, x_org, blocked)
        org_id = await _org_id(conn, slug, create=named and get_settings().auto_create_orgs)
        await conn.execute("SELECT set_config('app.current_org', %s, true)", [str(org_id)])
        roles = await _sync_membership(conn, org_id, user_id, grant.roles)
    return Principal(
        user_id=user_id,
        org_id=org_id,
        org_slug=slug,
        roles=roles,
        subject=verified.subject,
        via="oidc",
        orgs=tuple(dict.fromkeys(s for s in [slug, *granted] if s not in blocked)),
    )


async def _sync_membership(
    conn: Conn, org_id: UUID, user_id: UUID, token_roles: frozenset[str] | None
) -> frozenset[str]:
    # Read first: the common case (nothing changed) takes no row lock and writes nothing.
    row = await membership_store.roles_and_status(conn, org_id, user_id)
    if row is not None and row["status"] != "active":
        raise membership_refusal(row["status"])
    stored: list[str] | None = row["roles"] if row else None
    if token_roles is None:
        if stored is not None:
            return frozenset(stored)
        wanted = ["user"]
    else:
        wanted = _sorted_roles(token_roles) or ["user"]
        if stored is not None and sorted(stored) == sorted(wanted):
            return frozenset(stored)
    await membership_store.put_roles(conn, org_id, user_id, wanted)
    return frozenset(wanted)
