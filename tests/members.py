"""Other members of a test tenant's org (for the cross-user checks)."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg


class Colleague:
    """Another member of an existing tenant's org (for the cross-user checks)."""

    def __init__(self, org_id: uuid.UUID, slug: str, subject: str) -> None:
        self.org_id, self.slug, self.subject = org_id, slug, subject


def colleague_of(admin_url: str, tenant: Any) -> Colleague:
    from personal_agent.settings import get_settings

    subject = f"user-{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute(
            "INSERT INTO users (issuer, subject, email) VALUES (%s, %s, %s) RETURNING id",
            [get_settings().dev_issuer, subject, f"{subject}@example.test"],
        ).fetchone()
        assert row is not None
        conn.execute(
            "INSERT INTO memberships (org_id, user_id, roles) VALUES (%s, %s, %s)", [tenant.org_id, row[0], ["user"]]
        )
    return Colleague(tenant.org_id, tenant.slug, subject)
