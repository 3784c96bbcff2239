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


class ConfigurationError(Exception):
    """The environment is not set up to run: one clear line says what and how to fix it."""
