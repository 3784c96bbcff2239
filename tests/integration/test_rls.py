"""Row-level security: through the app role, tenant tables fail closed and orgs cannot see each other."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
import pytest

TENANT_TABLES_SQL = """
SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind = 'r'
  AND EXISTS (SELECT 1 FROM information_schema.columns
              WHERE table_schema = 'public' AND table_name = c.relname AND column_name = 'org_id')
ORDER BY 1
"""


def _seed(admin_url: str, tenant: Any) -> dict[str, Any]:
    """One row in every tenant table for this tenant, written as the owner."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        chat = conn.execute(
            "INSERT INTO chats (org_id, user_id, title) VALUES (%s, %s, 'secret') RETURNING id",
            [tenant.org_id, tenant.user_id],
        ).fetchone()
        assert chat
        run_id = uuid.uuid4()
        conn.execute(
            "INSERT INTO runs (id, org_id, chat_id, user_id, mode, spec) VALUES (%s, %s, %s, %s, 'inline', '{}')",
            [run_id, tenant.org_id, chat[0], tenant.user_id],
        )
        conn.execute(
            "INSERT INTO messages (org_id, chat_id, run_id, kind, message) VALUES (%s, %s, %s, 'request', '{}')",
            [tenant.org_id, chat[0], run_id],
        )
        conn.execute(
            "INSERT INTO run_checkpoints (run_id, seq, org_id, kind, messages) VALUES (%s, 1, %s, 'start', '[]')",
            [run_id, tenant.org_id],
        )
        conn.execute(
            "INSERT INTO usage_records (org_id, run_id, request_index, model_name) VALUES (%s, %s, 0, 'test')",
            [tenant.org_id, run_id],
        )
        conn.execute(
            "INSERT INTO provider_keys (org_id, provider, ciphertext, nonce, encrypted_data_key, key_hint)"
            " VALUES (%s, 'openai', 'x', 'n', 'k', '1234')",
            [tenant.org_id],
        )
        conn.execute(
            "INSERT INTO api_tokens (org_id, user_id, name, token_hash, prefix) VALUES (%s, %s, 't', %s, 'pa_pat_')",
            [tenant.org_id, tenant.user_id, uuid.uuid4().hex],
        )
        conn.execute(
            "INSERT INTO memories (org_id, user_id, text) VALUES (%s, %s, 'likes tea')", [tenant.org_id, tenant.user_id]
        )
        conn.execute(
            "INSERT INTO attachments (org_id, user_id, chat_id, kind, filename, content_type, size, object_key)"
            " VALUES (%s, %s, %s, 'image', 'a.png', 'image/png', 1, %s)",
            [tenant.org_id, tenant.user_id, chat[0], f"attachments/{tenant.org_id}/{uuid.uuid4()}/a.png"],
        )
    return {"chat_id": chat[0], "run_id": run_id}


def _tenant_tables(admin_url: str) -> list[tuple[str, bool, bool]]:
    with psycopg.connect(admin_url) as conn:
        return [(r[0], r[1], r[2]) for r in conn.execute(TENANT_TABLES_SQL)]


def test_every_tenant_table_has_forced_rls(admin_url: str) -> None:
    tables = _tenant_tables(admin_url)
    assert len(tables) >= 8
    assert [t for t in tables if not (t[1] and t[2])] == []


def test_app_role_cannot_bypass_rls(app_url: str) -> None:
    with psycopg.connect(app_url) as conn:
        row = conn.execute("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user").fetchone()
    assert row == (False, False)


def test_unset_org_reads_every_tenant_table_as_empty(admin_url: str, app_url: str, make_tenant: Any) -> None:
    _seed(admin_url, make_tenant())
    with psycopg.connect(app_url) as conn:
        for table, _, _ in _tenant_tables(admin_url):
            count = conn.execute(f"SELECT count(*) FROM {table}").fetchone()  # noqa: S608 - names from catalog
            assert count == (0,), table


def test_org_cannot_read_or_change_another_orgs_rows(admin_url: str, app_url: str, make_tenant: Any) -> None:
    a, b = make_tenant(), make_tenant()
    rows_a, rows_b = _seed(admin_url, a), _seed(admin_url, b)
    with psycopg.connect(app_url) as conn:
        conn.execute("SELECT set_config('app.current_org', %s, false)", [str(a.org_id)])
        for table, _, _ in _tenant_tables(admin_url):
            foreign = conn.execute(f"SELECT count(*) FROM {table} WHERE org_id = %s", [b.org_id]).fetchone()  # noqa: S608
            assert foreign == (0,), table
        assert conn.execute("SELECT count(*) FROM chats WHERE id = %s", [rows_a["chat_id"]]).fetchone() == (1,)
        updated = conn.execute("UPDATE chats SET title = 'pwned' WHERE id = %s", [rows_b["chat_id"]])
        assert updated.rowcount == 0
        deleted = conn.execute("DELETE FROM runs WHERE org_id = %s", [b.org_id])
        assert deleted.rowcount == 0
        conn.commit()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO chats (org_id, user_id, title) VALUES (%s, %s, 'forged')", [b.org_id, b.user_id])
        conn.rollback()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE chats SET org_id = %s WHERE id = %s", [b.org_id, rows_a["chat_id"]])
        conn.rollback()
    with psycopg.connect(admin_url) as conn:
        title = conn.execute("SELECT title FROM chats WHERE id = %s", [rows_b["chat_id"]]).fetchone()
        runs_b = conn.execute("SELECT count(*) FROM runs WHERE org_id = %s", [b.org_id]).fetchone()
    assert title == ("secret",) and runs_b == (1,)
