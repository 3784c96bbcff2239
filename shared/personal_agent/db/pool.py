"""The process's async connection pool and the transaction helpers that set `app.current_org`.

On Lambda the pool lives for the container (min size 0, so an idle container holds nothing open
against RDS Proxy); in the dev server it lives for the process.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any
from uuid import UUID

from personal_agent.errors import ConfigurationError, InvalidInput
from personal_agent.secret_env import ensure_secrets_loaded
from personal_agent.settings import get_settings

# psycopg is imported on first use, not at import: the API function's cold start does not pay for it.
if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg.rows import DictRow
    from psycopg_pool import AsyncConnectionPool

    Conn = AsyncConnection[DictRow]
else:
    Conn = Any

_pools: dict[int, AsyncConnectionPool[Conn]] = {}


def jsonb(value: Any) -> Any:
    """A JSONB query parameter (psycopg's `Jsonb`, imported lazily)."""
    from psycopg.types.json import Jsonb

    return Jsonb(value)


def _loop_key() -> int:
    return id(asyncio.get_running_loop())


async def get_pool() -> AsyncConnectionPool[Conn]:
    """The pool for the running event loop, opened on first use."""
    key = _loop_key()
    pool = _pools.get(key)
    if pool is None:
        from psycopg import AsyncConnection
        from psycopg.rows import DictRow, dict_row
        from psycopg_pool import AsyncConnectionPool

        ensure_secrets_loaded()  # on AWS the URL comes from Secrets Manager, fetched on first use
        url = get_settings().database_url
        if not url:
            raise ConfigurationError("DATABASE_URL is not set: run `pa dev` or point DATABASE_URL at Postgres")
        pool = AsyncConnectionPool(
            url,
            min_size=0,
            max_size=get_settings().database_pool_max,
            kwargs={"row_factory": dict_row, "autocommit": True},
            connection_class=AsyncConnection[DictRow],
            open=False,
            max_idle=300,
            # A frozen Lambda container may hold connections the proxy closed: check them there. Locally
            # that extra round trip per checkout buys nothing.
            check=AsyncConnectionPool.check_connection if get_settings().environment == "aws" else None,
        )
        await pool.open()
        _pools[key] = pool
    return pool


async def close_pool() -> None:
    """Close the running loop's pool (tests, shutdown)."""
    pool = _pools.pop(_loop_key(), None)
    if pool is not None:
        await pool.close()


@asynccontextmanager
async def org_transaction(org_id: UUID | str) -> AsyncIterator[Conn]:
    """A transaction in which RLS sees exactly one org's rows.

    BEGIN and the org go in one round trip (two statements in one simple-protocol query; psycopg's transaction
    block sends BEGIN alone first): one round trip less per transaction, and a run makes about ten. The org is
    a UUID's own text, so it is safe as a literal. A `conn.transaction()` inside is a savepoint, as before."""
    org = str(org_id if isinstance(org_id, UUID) else UUID(org_id))
    pool = await get_pool()
    with _caller_values():
        async with pool.connection() as conn:
            await conn.execute(f"BEGIN; SELECT set_config('app.current_org', '{org}', true)", prepare=False)
            try:
                yield conn
            except BaseException:
                await _rollback(conn)
                raise
            await conn.execute("COMMIT", prepare=False)


async def _rollback(conn: Conn) -> None:
    """End a failed transaction; a connection that cannot even roll back is discarded by the pool on return."""
    from psycopg import Error

    with contextlib.suppress(Error):
        await conn.execute("ROLLBACK", prepare=False)


@asynccontextmanager
async def system_transaction() -> AsyncIterator[Conn]:
    """A transaction with no org set: tenant tables read as empty; only global tables are visible."""
    pool = await get_pool()
    with _caller_values():
        async with pool.connection() as conn, conn.transaction():
            yield conn


# untranslatable_character (`\u0000` in jsonb), character_not_in_repertoire
_TEXT_STATES = frozenset({"22P05", "22021"})


@contextmanager
def _caller_values() -> Iterator[None]:
    """Map a value Postgres refused (see `_unstorable`) to a 422; anything else passes unchanged."""
    try:
        yield
    except Exception as exc:
        mapped = _unstorable(exc)
        if mapped is None:
            raise
        raise mapped from exc


def _unstorable(exc: Exception) -> InvalidInput | None:
    """A value Postgres cannot store (a NUL character, a date or number out of its range) came from the caller:
    422 with a stable code; the transaction it was in has been rolled back, so nothing is stored."""
    from psycopg import DataError

    if not isinstance(exc, DataError):
        return None
    sqlstate = getattr(exc.diag, "sqlstate", None)
    if "NUL" in str(exc) or sqlstate in _TEXT_STATES:
        return InvalidInput("text may not contain NUL (\\u0000) characters", code="invalid_text")
    return InvalidInput("a value is out of the range that can be stored", code="invalid_value")
