"""Reading orgs and roles out of verified token claims, at configurable claim paths.

One path syntax for every identity provider: dotted (`realm_access.roles`,
`resource_access.personal-agent.roles`), an exact top-level key first so Auth0's namespaced
claims (`https://example.com/org`) and Cognito's `cognito:groups` work as written, and several
paths separated by commas whose values are merged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

ROLES = ("admin", "org-admin", "user")
_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")


@dataclass(frozen=True)
class ClaimMapping:
    """Where one issuer puts orgs and roles, and how group-style values are filtered."""

    org_claim: str = "org"
    roles_claim: str = "roles"
    org_prefix: str = ""
    role_prefix: str = ""

    @property
    def carries_orgs(self) -> bool:
        """The issuer's tokens are meant to name orgs (false only when the org claim is configured empty)."""
        return any(p.strip() for p in self.org_claim.split(","))

    @property
    def carries_roles(self) -> bool:
        """The issuer's tokens are meant to carry roles (false only when the roles claim is configured empty)."""
        return any(p.strip() for p in self.roles_claim.split(","))


@dataclass(frozen=True)
class Grant:
    """What a token grants: orgs (first is the default) and roles.

    A claim the issuer is configured to carry is authoritative even when the token lacks it (an IdP
    such as Cognito omits an empty `cognito:groups`): then the token grants no org / no role. `None`
    only when the issuer is configured without that claim, so the stored memberships decide.
    """

    orgs: tuple[str, ...] | None
    roles: frozenset[str] | None


def claim_values(claims: Mapping[str, Any], paths: str) -> list[str] | None:
    """Strings found at the comma-separated `paths`; `None` when no path exists in the claims."""
    found: list[str] | None = None
    for path in (p.strip() for p in paths.split(",")):
        if not path:
            continue
        value = _lookup(claims, path)
        if value is _MISSING:
            continue
        found = found if found is not None else []
        found.extend(_strings(value))
    return found


def normalize_org(value: str) -> str | None:
    """An org slug from a claim value (`/Acme` -> `acme`), or None if it cannot be one."""
    slug = value.strip().lstrip("/").lower()
    return slug if _SLUG.match(slug) else None


def read_grant(claims: Mapping[str, Any], mapping: ClaimMapping) -> Grant:
    """The orgs and roles a verified token grants under `mapping` (a missing configured claim grants none)."""
    orgs: tuple[str, ...] | None = None
    if mapping.carries_orgs:
        raw_orgs = claim_values(claims, mapping.org_claim) or []
        slugs = (normalize_org(v) for v in _with_prefix(raw_orgs, mapping.org_prefix))
        orgs = tuple(dict.fromkeys(s for s in slugs if s))
    roles: frozenset[str] | None = None
    if mapping.carries_roles:
        raw_roles = claim_values(claims, mapping.roles_claim) or []
        roles = frozenset(r for r in _with_prefix(raw_roles, mapping.role_prefix) if r in ROLES)
    return Grant(orgs=orgs, roles=roles)


class _Missing:
    pass


_MISSING = _Missing()


def _lookup(claims: Mapping[str, Any], path: str) -> Any:
    if path in claims:
        return claims[path]
    node: Any = claims
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        # Some providers send space- or comma-separated lists in one string.
        return [v for v in re.split(r"[\s,]+", value) if v]
    if isinstance(value, Mapping):  # Keycloak organizations with attributes: {"acme": {...}}
        return [k for k in value if isinstance(k, str)]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)]
    return []


def _with_prefix(values: Iterable[str], prefix: str) -> list[str]:
    if not prefix:
        return list(values)
    return [v[len(prefix) :] for v in values if v.startswith(prefix)]
