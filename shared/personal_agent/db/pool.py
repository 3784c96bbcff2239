"""The process's async connection pool and the transaction helpers that set `app.current_org`.

On Lambda the pool lives for the container (min size 0, so an idle container holds nothing open
against RDS Proxy); in the dev server it lives for the process.

Nothing waits on Postgres unbounded (a connect, a pooled connection, a statement: `PA_DATABASE_*_TIMEOUT_SECONDS`),
and a pooled connection that died with the server (a restart, a failover) is replaced before the transaction's
first statement, where nothing has run yet. A connection-class failure of a transaction reaches its caller as
`DependencyUnavailable("database")`: the API answers 503, a run's driver pauses the run (`db/retry.py` retries
whole idempotent units within `PA_DEPENDENCY_RETRY_SECONDS` first).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any
from uuid import UUID

from personal_agent.errors import ConfigurationError, DependencyUnavailable, InvalidInput, dependency_outage
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
        settings = get_settings()
        url = settings.database_url
        if not url:
            raise ConfigurationError("DATABASE_URL is not set: run `pa dev` or point DATABASE_URL at Postgres")
        pool = AsyncConnectionPool(
            url,
            min_size=0,
            max_size=settings.database_pool_max,
            kwargs={"row_factory": dict_row, "autocommit": True, **_connect_options(), **_prepare_options()},
            connection_class=AsyncConnection[DictRow],
            open=False,
            max_idle=300,
            timeout=settings.database_pool_timeout_seconds,
            # The pool retries a failed connect with backoff until this; short, so that once the server is back
            # the next request connects at once rather than after a backoff grown through the whole outage.
            reconnect_timeout=max(2.0, settings.database_pool_timeout_seconds / 2),
            # A frozen Lambda container may hold connections the proxy closed: check them there. Locally
            # that extra round trip per checkout buys nothing.
            check=AsyncConnectionPool.check_connection if settings.environment == "aws" else None,
        )
        await pool.open()
        _pools[key] = pool
    return pool


def _connect_options() -> dict[str, Any]:
    """libpq options of every connection: a bounded connect, and TCP keepalives so that a statement on a connection
    to a server that vanished (a failover) fails within seconds instead of waiting on the kernel's defaults."""
    return {
        "connect_timeout": get_settings().database_connect_timeout_seconds,
        "keepalives": 1,
        "keepalives_idle": 5,
        "keepalives_interval": 2,
        "keepalives_count": 3,
        "tcp_user_timeout": 15_000,
    }


def _prepare_options() -> dict[str, Any]:
    """psycopg's automatic server-side prepared statements, off behind a transaction pooler (RDS Proxy pins a
    connection that prepared one: `PA_DATABASE_PREPARED_STATEMENTS`); a statement still goes as Parse/Bind/Execute
    of the unnamed statement, which the proxy multiplexes."""
    return {} if get_settings().database_prepared_statements else {"prepare_threshold": None}


def _begin(org: str | None, user: str | None = None) -> str:
    """BEGIN with the transaction's settings in the same round trip: the org RLS sees (if any), the user whose own
    rows it sees (if any: `app.current_user`), and the statement timeout, all transaction-local (no session state,
    so RDS Proxy never pins a connection for them). The org and user are UUIDs' own text, safe as literals."""
    values = [f"set_config('app.current_org', '{org}', true)"] if org else []
    if user:
        values.append(f"set_config('app.current_user', '{user}', true)")
    seconds = get_settings().database_statement_timeout_seconds
    if seconds:
        values.append(f"set_config('statement_timeout', '{int(seconds * 1000)}', true)")
    return f"BEGIN; SELECT {', '.join(values)}" if values else "BEGIN"


async def close_pool() -> None:
    """Close the running loop's pool (tests, shutdown)."""
    pool = _pools.pop(_loop_key(), None)
    if pool is not None:
        await pool.close()


@asynccontextmanager
async def org_transaction(org_id: UUID | str, *, user_id: UUID | None = None) -> AsyncIterator[Conn]:
    """A transaction in which RLS sees exactly one org's rows (and, with `user_id`, that user's own rows where a
    policy reads `app.current_user`, set in the same round trip).

    BEGIN and the org go in one round trip (two statements in one simple-protocol query, `_begin`; psycopg's
    transaction block sends BEGIN alone first): one round trip less per transaction, and a run makes about ten.
    A `conn.transaction()` inside is a savepoint, as before."""
    org = str(org_id if isinstance(org_id, UUID) else UUID(org_id))
    with _caller_values(), _outages():
        async with _begun(_begin(org, str(UUID(str(user_id))) if user_id is not None else None)) as conn:
            try:
                yield conn
            except BaseException:
                await _rollback(conn)
                raise
            await conn.execute("COMMIT", prepare=False)


@asynccontextmanager
async def _begun(begin: str) -> AsyncIterator[Conn]:
    """A pooled connection with its transaction begun. A connection that turns out dead at `begin` (the server
    restarted or failed over since it was pooled) is dropped and another taken, until the pool's timeout: nothing
    of the caller's has run on it yet, so this is always safe to repeat."""
    pool = await get_pool()
    deadline = time.monotonic() + get_settings().database_pool_timeout_seconds
    while True:
        conn = await pool.getconn(timeout=max(0.1, deadline - time.monotonic()))
        try:
            await conn.execute(begin, prepare=False)
        except BaseException as exc:
            await pool.putconn(conn)  # a broken connection is discarded by the pool
            if not (conn.broken and dependency_outage(exc) is not None and time.monotonic() < deadline):
                raise
            continue
        try:
            yield conn
        finally:
            await pool.putconn(conn)
        return


@contextmanager
def _outages() -> Iterator[None]:
    """A connection-class failure (see `errors.dependency_outage`) becomes `DependencyUnavailable("database")`."""
    try:
        yield
    except DependencyUnavailable:
        raise
    except Exception as exc:
        outage = dependency_outage(exc)
        if outage is None or outage.dependency != "database":
            raise
        raise DependencyUnavailable("database", retry_after=outage.retry_after) from exc


async def _rollback(conn: Conn) -> None:
    """End a failed transaction; a connection that cannot even roll back is discarded by the pool on return."""
    from psycopg import Error

    with contextlib.suppress(Error):
        await conn.execute("ROLLBACK", prepare=False)


@asynccontextmanager
async def system_transaction() -> AsyncIterator[Conn]:
    """A transaction with no org set: tenant tables read as empty; only global tables are visible."""
    with _caller_values(), _outages():
        async with _begun(_begin(None)) as conn:
            try:
                yield conn
            except BaseException:
                await _rollback(conn)
                raise
            await conn.execute("COMMIT", prepare=False)


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
