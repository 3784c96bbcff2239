"""Owner scoping in SQL (issue 28, item 11), checked through the app role as the app connects: an attachment is
visible only to the person who uploaded it (like a memory), the metering export ledger only outside any org, and
the cross-org metering functions are executable by the app role but not by PUBLIC (any other role)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from personal_agent.settings import get_settings

METERING_FUNCTIONS = ("pa_metering_usage(timestamptz, timestamptz)", "pa_metering_runs(timestamptz, timestamptz)")


def _colleague(admin_url: str, org_id: Any) -> Any:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute(
            "INSERT INTO users (issuer, subject) VALUES ('test', 'colleague-' || gen_random_uuid()) RETURNING id"
        ).fetchone()
        assert row is not None
        conn.execute("INSERT INTO memberships (org_id, user_id) VALUES (%s, %s)", [org_id, row[0]])
    return row[0]


def _session(app_url: str, org: Any, user: Any) -> psycopg.Connection[Any]:
    conn = psycopg.connect(app_url, autocommit=True)
    if org is not None:
        conn.execute("SELECT set_config('app.current_org', %s, false)", [str(org)])
    if user is not None:
        conn.execute("SELECT set_config('app.current_user', %s, false)", [str(user)])
    return conn


def test_the_app_role_sees_only_the_acting_users_attachments(admin_url: str, app_url: str, make_tenant: Any) -> None:
    alice = make_tenant()
    colleague = _colleague(admin_url, alice.org_id)
    key = f"attachments/{alice.org_id}/{uuid.uuid4()}/a.png"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        chat = conn.execute(
            "INSERT INTO chats (org_id, user_id, title) VALUES (%s, %s, 'c') RETURNING id",
            [alice.org_id, alice.user_id],
        ).fetchone()
        assert chat is not None
        conn.execute(
            "INSERT INTO attachments (org_id, user_id, chat_id, kind, filename, content_type, size, object_key)"
            " VALUES (%s, %s, %s, 'image', 'a.png', 'image/png', 1, %s)",
            [alice.org_id, alice.user_id, chat[0], key],
        )

    def visible(org: Any, user: Any) -> list[str]:
        with _session(app_url, org, user) as conn:
            return [r[0] for r in conn.execute("SELECT object_key FROM attachments WHERE chat_id = %s", [chat[0]])]

    assert visible(alice.org_id, alice.user_id) == [key]
    assert visible(alice.org_id, None) == []  # the org alone is not enough
    assert visible(alice.org_id, colleague) == []  # a colleague in the same org
    with _session(app_url, alice.org_id, colleague) as conn:
        assert (
            conn.execute("UPDATE attachments SET run_id = gen_random_uuid() WHERE chat_id = %s", [chat[0]]).rowcount
            == 0
        )
        assert conn.execute("DELETE FROM attachments WHERE chat_id = %s", [chat[0]]).rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # filing one under someone else is refused
            conn.execute(
                "INSERT INTO attachments (org_id, user_id, chat_id, kind, filename, content_type, size, object_key)"
                " VALUES (%s, %s, %s, 'image', 'b.png', 'image/png', 1, %s)",
                [alice.org_id, alice.user_id, chat[0], f"{key}.planted"],
            )


def test_a_project_chats_files_are_read_by_its_members_and_changed_by_their_uploader_only(
    admin_url: str, app_url: str, make_tenant: Any
) -> None:
    """0046: carol's file in alice's project chat is read by every member (bob, a viewer, too) and alice, changed and
    deleted by nobody but carol; dave (no member) reads nothing; once the chat is restricted, members read it no more
    (carol still reads her own row: her export and erase need it)."""
    alice = make_tenant()
    bob, carol, dave = (_colleague(admin_url, alice.org_id) for _ in range(3))
    key = f"attachments/{alice.org_id}/{uuid.uuid4()}/w.png"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        project = conn.execute("INSERT INTO projects (org_id, name) VALUES (%s, 'p') RETURNING id", [alice.org_id])
        pid = project.fetchone()[0]  # type: ignore[index]
        for user, role in ((alice.user_id, "owner"), (bob, "viewer"), (carol, "editor")):
            conn.execute(
                "INSERT INTO project_members (project_id, org_id, user_id, role) VALUES (%s, %s, %s, %s)",
                [pid, alice.org_id, user, role],
            )
        chat = conn.execute(
            "INSERT INTO chats (org_id, user_id, title, project_id) VALUES (%s, %s, 'c', %s) RETURNING id",
            [alice.org_id, alice.user_id, pid],
        ).fetchone()
        assert chat is not None
        conn.execute(
            "INSERT INTO attachments (org_id, user_id, chat_id, kind, filename, content_type, size, object_key)"
            " VALUES (%s, %s, %s, 'image', 'w.png', 'image/png', 1, %s)",
            [alice.org_id, carol, chat[0], key],
        )

    def reach(user: Any) -> tuple[int, int, int]:
        """How many rows a read, a change and a delete of the file reach, acting as `user`."""
        with _session(app_url, alice.org_id, user) as conn:
            read = conn.execute("SELECT 1 FROM attachments WHERE chat_id = %s", [chat[0]]).rowcount
            changed = conn.execute("UPDATE attachments SET filename = 'x.png' WHERE chat_id = %s", [chat[0]]).rowcount
            conn.execute("BEGIN")
            deleted = conn.execute("DELETE FROM attachments WHERE chat_id = %s", [chat[0]]).rowcount
            conn.execute("ROLLBACK")
        return read, changed, deleted

    assert [reach(u) for u in (alice.user_id, bob, dave)] == [(1, 0, 0), (1, 0, 0), (0, 0, 0)]
    assert reach(carol) == (1, 1, 1)  # her own (the delete rolled back)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("UPDATE chats SET classification = 'restricted' WHERE id = %s", [chat[0]])
    assert [reach(u)[0] for u in (alice.user_id, bob, carol)] == [1, 0, 1]


def test_the_metering_ledger_is_the_platforms_alone(admin_url: str, app_url: str, make_tenant: Any) -> None:
    tenant = make_tenant()
    start = datetime(1990, 1, 1, tzinfo=UTC) + timedelta(hours=uuid.uuid4().int % 100_000)
    export_id = f"test-{uuid.uuid4()}"
    with psycopg.connect(admin_url) as conn:
        row = conn.execute(
            "SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE oid = 'metering_exports'::regclass"
        ).fetchone()
    assert row == (True, True)
    with _session(app_url, None, None) as conn:  # the exporter's system transaction: no org
        conn.execute(
            "INSERT INTO metering_exports (period_kind, period_start, period_end, object_key, export_id, totals)"
            " VALUES ('hour', %s, %s + interval '1 hour', 'k', %s, '{}')",
            [start, start, export_id],
        )
        assert conn.execute("SELECT count(*) FROM metering_exports WHERE export_id = %s", [export_id]).fetchone() == (
            1,
        )
    try:
        with _session(app_url, tenant.org_id, tenant.user_id) as conn:  # any tenant-scoped session
            assert conn.execute("SELECT count(*) FROM metering_exports").fetchone() == (0,)
            assert conn.execute("DELETE FROM metering_exports WHERE export_id = %s", [export_id]).rowcount == 0
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(
                    "INSERT INTO metering_exports (period_kind, period_start, period_end, object_key, export_id,"
                    " totals) VALUES ('month', %s, %s + interval '1 month', 'k', %s, '{}')",
                    [start, start, f"{export_id}-planted"],
                )
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:  # the real exports' catch-up never sees it
            conn.execute("DELETE FROM metering_exports WHERE export_id = %s", [export_id])


def test_the_metering_functions_are_not_executable_by_public(admin_url: str) -> None:
    app_role = get_settings().database_app_role
    outsider = f"pa_outsider_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {outsider} LOGIN")
        try:
            for function in METERING_FUNCTIONS:
                granted = conn.execute(
                    "SELECT has_function_privilege(%s, %s, 'EXECUTE'), has_function_privilege(%s, %s, 'EXECUTE')",
                    [app_role, function, outsider, function],
                ).fetchone()
                assert granted == (True, False), function
        finally:
            conn.execute(f"DROP ROLE {outsider}")
