"""The authenticated caller as every route sees it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from uuid import UUID

Role = Literal["admin", "org-admin", "user"]


@dataclass(frozen=True)
class Principal:
    """A verified caller: the user, the org this request acts in, and the roles held there."""

    user_id: UUID
    org_id: UUID
    org_slug: str
    roles: frozenset[str]
    subject: str
    via: Literal["oidc", "pat"] = "oidc"
    # Every org this credential may act in (pick one with `X-Org`); a PAT grants only its own.
    orgs: tuple[str, ...] = ()

    @property
    def is_org_admin(self) -> bool:
        return bool(self.roles & {"admin", "org-admin"})
