"""`pa_enable_tenant_rls` (migration 0013): one call makes a new table tenant-owned — RLS enabled and forced,
each org sees and writes only its own rows, nothing while no org is set — and only migrations may call it.

Everything happens in one transaction that is rolled back, so the scratch table never outlives the test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql

from personal_agent.settings import get_settings

ORG_A, ORG_B = uuid.uuid4(), uuid.uuid4()


@pytest.fixture
def scratch(admin_url: str) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """An owner's transaction holding `scratch_notes` (one row per org) made tenant-owned by the function."""
    with psycopg.connect(admin_url) as conn:
        conn.execute("CREATE TABLE scratch_notes (id serial PRIMARY KEY, org_id uuid NOT NULL, body text NOT NULL)")
        conn.execute("SELECT pa_enable_tenant_rls('scratch_notes')")
        app_role = sql.Identifier(get_settings().database_app_role)
        conn.execute(sql.SQL("GRANT SELECT, INSERT ON scratch_notes TO {}").format(app_role))
        conn.execute(sql.SQL("GRANT USAGE ON SEQUENCE scratch_notes_id_seq TO {}").format(app_role))
        for org, body in ((ORG_A, "a's note"), (ORG_B, "b's note")):
            conn.execute("SELECT set_config('app.current_org', %s, true)", [str(org)])
            conn.execute("INSERT INTO scratch_notes (org_id, body) VALUES (%s, %s)", [org, body])
        conn.execute(sql.SQL("SET LOCAL ROLE {}").format(app_role))  # from here on: as the app
        try:
            yield conn
        finally:
            conn.rollback()


def _as_org(conn: psycopg.Connection[tuple[object, ...]], org: uuid.UUID | None) -> list[object]:
    conn.execute("SELECT set_config('app.current_org', %s, true)", [str(org) if org else ""])
    return [row[0] for row in conn.execute("SELECT body FROM scratch_notes ORDER BY id")]


def test_the_table_gets_forced_rls_and_the_tenant_policy(scratch: psycopg.Connection[tuple[object, ...]]) -> None:
    flags = scratch.execute(
        "SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE oid = 'scratch_notes'::regclass"
    ).fetchone()
    assert flags == (True, True)
    policies = scratch.execute(
        "SELECT policyname, cmd, qual, with_check FROM pg_policies WHERE tablename = 'scratch_notes'"
    ).fetchall()
    assert policies == [
        ("tenant_isolation", "ALL", "(org_id = pa_current_org())", "(org_id = pa_current_org())"),
    ]


def test_each_org_sees_only_its_rows_and_none_without_an_org(
    scratch: psycopg.Connection[tuple[object, ...]],
) -> None:
    assert _as_org(scratch, ORG_A) == ["a's note"]
    assert _as_org(scratch, ORG_B) == ["b's note"]
    assert _as_org(scratch, None) == []


def test_an_org_cannot_write_a_row_for_another(scratch: psycopg.Connection[tuple[object, ...]]) -> None:
    _as_org(scratch, ORG_A)
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"), scratch.transaction():
        scratch.execute("INSERT INTO scratch_notes (org_id, body) VALUES (%s, 'planted')", [ORG_B])
    scratch.execute("INSERT INTO scratch_notes (org_id, body) VALUES (%s, 'mine')", [ORG_A])
    assert _as_org(scratch, ORG_A) == ["a's note", "mine"]
    assert _as_org(scratch, ORG_B) == ["b's note"]


def test_the_app_role_cannot_call_it(scratch: psycopg.Connection[tuple[object, ...]]) -> None:
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for function"):
        scratch.execute("SELECT pa_enable_tenant_rls('scratch_notes')")
