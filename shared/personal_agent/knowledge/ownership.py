"""Who may do what to a knowledge document (issue 28, item 7), checked by the service before SQL, which holds the
same rules (migration 0024's policies and trigger) in case a code path forgets:

- anyone in the org adds to the `org` collection, as its author; only the author or an org admin changes,
  re-indexes or deletes a document (403 `not_document_author` for a colleague);
- only an org admin puts an `org` document above the org's default classification (the classification at the
  org's tier floor: 403 `classification_above_default`), or marks a document trusted (403 `trusted_requires_admin`).
  A personal or chat document is seen by its owner only, so its classification is the owner's call;
- a passage is untrusted content for a reader who did not author its document, unless an admin marked it trusted.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn
from personal_agent.errors import Forbidden
from personal_agent.governance.candidates import read_org_settings
from personal_agent.governance.tiers import CLASSIFICATION_TIERS, classification_tier
from personal_agent.knowledge import scopes


def check_may_manage(row: dict[str, Any], user_id: UUID, admin: bool) -> None:
    """403 `not_document_author` unless the caller wrote the document or is an org admin."""
    if not admin and row["created_by"] != user_id:
        raise Forbidden(
            "only the document's author or an org admin may change or delete it", code="not_document_author"
        )


def check_trusted(trusted: bool, admin: bool) -> None:
    if trusted and not admin:
        raise Forbidden("only an org admin may mark a document trusted", code="trusted_requires_admin")


async def check_classification(conn: Conn, org_id: UUID, collection: str, classification: str, admin: bool) -> None:
    """403 `classification_above_default` for a member's `org` document classified above the org's default."""
    if admin or collection != scopes.ORG:
        return
    floor = int((await read_org_settings(conn, org_id))["tier_floor"])
    if classification_tier(classification) > floor:
        default = next(name for name, tier in CLASSIFICATION_TIERS.items() if tier == floor)
        raise Forbidden(
            f"only an org admin may classify an org document above the org default ({default})",
            code="classification_above_default",
        )


def passage_untrusted(author: UUID | None, trusted: bool, reader: UUID | None, web: bool = False) -> bool:
    """Text the reader did not write and no admin vouched for is untrusted content; so is text a source fetched
    from the web (migration 0030), whoever added the source and whatever an admin says."""
    return web or (not trusted and (reader is None or author != reader))
