"""Behind RDS Proxy (`PA_DATABASE_PREPARED_STATEMENTS=false`, set by the template) the app's connections prepare no
statement server-side: a session holding a prepared statement is pinned by the proxy to one Aurora connection. Directly
on Postgres psycopg keeps preparing a statement it runs often (the default). Checked on the real pool against the
embedded Postgres: `pg_prepared_statements` lists what the session has prepared."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from personal_agent.db import close_pool, system_transaction
from personal_agent.settings import get_settings

RUNS = 8  # past psycopg's prepare_threshold (5)


@pytest.fixture
def prepared_statements(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    yield monkeypatch
    monkeypatch.undo()
    get_settings.cache_clear()


async def _prepared_after_repeats() -> int:
    """How many statements the session has prepared after running one statement `RUNS` times (a fresh pool)."""
    await close_pool()
    async with system_transaction() as conn:
        for n in range(RUNS):
            await conn.execute("SELECT %s::int + 1 AS n", [n])
        row = await (await conn.execute("SELECT count(*) AS n FROM pg_prepared_statements", prepare=False)).fetchone()
    await close_pool()
    assert row is not None
    return int(row["n"])


@pytest.mark.usefixtures("stack")
async def test_behind_a_pooler_no_statement_is_prepared(prepared_statements: pytest.MonkeyPatch) -> None:
    prepared_statements.setenv("PA_DATABASE_PREPARED_STATEMENTS", "false")
    get_settings.cache_clear()
    assert await _prepared_after_repeats() == 0


@pytest.mark.usefixtures("stack")
async def test_directly_on_postgres_a_repeated_statement_is_prepared(prepared_statements: pytest.MonkeyPatch) -> None:
    prepared_statements.delenv("PA_DATABASE_PREPARED_STATEMENTS", raising=False)
    get_settings.cache_clear()
    assert await _prepared_after_repeats() >= 1
