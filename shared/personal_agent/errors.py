"""The error hierarchy. Every API error is JSON with a stable `code`, a `message` and the request id."""

from __future__ import annotations

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


class ConfigurationError(Exception):
    """The environment is not set up to run: one clear line says what and how to fix it."""
