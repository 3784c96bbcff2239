"""The error hierarchy. Every API error is JSON with a stable `code`, a `message` and the request id."""

from __future__ import annotations

import sys
from typing import Any


class AppError(Exception):
    """A failure the caller can act on; `status` is the HTTP status it maps to."""

    status: int = 400
    code: str = "bad_request"

    def __init__(self, message: str, *, code: str | None = None, status: int | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status
        self.details = details


class InvalidInput(AppError):
    status = 422
    code = "invalid_input"


class NotFound(AppError):
    status = 404
    code = "not_found"


class Unauthorized(AppError):
    status = 401
    code = "unauthorized"


class Forbidden(AppError):
    status = 403
    code = "forbidden"


class Conflict(AppError):
    status = 409
    code = "conflict"


class RateLimited(AppError):
    status = 429
    code = "rate_limited"


class ServiceUnavailable(AppError):
    status = 503
    code = "unavailable"


class DependencyUnavailable(Exception):
    """The bus or the database stayed unreachable past `PA_DEPENDENCY_RETRY_SECONDS` (or at once, where waiting is
    not an option: an API request). Never a run failure: a run that meets it is paused at its last checkpoint and
    resumed by recovery; the API answers 503 `dependency_unavailable` with `Retry-After: retry_after`."""

    code = "dependency_unavailable"

    def __init__(self, dependency: str, message: str | None = None, *, retry_after: float = 5.0) -> None:
        self.dependency = dependency  # "bus" or "database"
        self.retry_after = max(1.0, float(retry_after))  # seconds a caller should wait before trying again
        self.message = message or f"the {dependency} is unavailable; try again shortly"
        super().__init__(self.message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_dependency_unavailable, (self.dependency, self.message, self.retry_after))


def _dependency_unavailable(dependency: str, message: str, retry_after: float) -> DependencyUnavailable:
    return DependencyUnavailable(dependency, message, retry_after=retry_after)


def dependency_outage(exc: BaseException) -> DependencyUnavailable | None:
    """`exc` as the outage it means, or None: a DependencyUnavailable itself; a database connection-class error
    (psycopg's OperationalError, which covers a lost connection, `admin_shutdown`, `cannot_connect_now`, a pool or
    statement timeout; or a write refused read-only after a failover); the bus's connection and timeout errors; the
    same found as the explicit cause (`raise ... from`) or inside an exception group. Drivers are looked up in
    `sys.modules`, never imported: an error of a driver not loaded cannot have been raised."""
    for _ in range(8):  # a cause chain is short; a cycle must not loop
        if isinstance(exc, DependencyUnavailable):
            return exc
        if isinstance(exc, AppError):
            return None  # the caller's error, already decided
        kind = _outage_kind(exc)
        if kind is not None:
            return DependencyUnavailable(kind, retry_after=_RETRY_AFTER[kind])
        if isinstance(exc, BaseExceptionGroup):
            inner = [dependency_outage(e) for e in exc.exceptions]
            return next((o for o in inner if o is not None), None)
        if exc.__cause__ is None:
            return None
        exc = exc.__cause__
    return None


_RETRY_AFTER = {"database": 5.0, "bus": 5.0}


def _outage_kind(exc: BaseException) -> str | None:
    psycopg = sys.modules.get("psycopg")
    if psycopg is not None and isinstance(exc, psycopg.OperationalError | psycopg.errors.ReadOnlySqlTransaction):
        return "database"
    redis = sys.modules.get("redis.exceptions")
    if redis is not None and isinstance(exc, redis.ConnectionError | redis.TimeoutError | redis.ReadOnlyError):
        return "bus"
    return None


class ConfigurationError(Exception):
    """The environment is not set up to run: one clear line says what and how to fix it."""
