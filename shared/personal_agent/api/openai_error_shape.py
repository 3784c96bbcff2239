"""The OpenAI error shape for `/v1`: `{"error": {"message", "type", "param", "code"}}`, with the statuses OpenAI's
SDKs expect (they raise `AuthenticationError` on 401, `NotFoundError` on 404, `RateLimitError` on 429, ...).

The one error mapping (`api/errors.py`) calls this for every request under `/v1/`; the platform's own `code` is
kept where OpenAI has none of its own, so a client can still tell `too_many_streams` from `insufficient_quota`."""

from __future__ import annotations

from typing import Any

V1_PREFIX = "/v1/"

# The platform's codes that OpenAI spells its own way.
_OPENAI_CODES = {
    "agent_not_found": "model_not_found",
    "model_not_found": "model_not_found",
    "unknown_model": "model_not_found",
    "budget_exceeded": "insufficient_quota",
    "too_many_streams": "rate_limit_exceeded",
    "rate_limited": "rate_limit_exceeded",
}


def is_v1(path: str) -> bool:
    return path.startswith(V1_PREFIX)


def error_type(status: int, code: str) -> str:
    """OpenAI's `type` for a status (and the quota code, which has its own type)."""
    if code == "insufficient_quota":
        return "insufficient_quota"
    if status == 401:
        return "authentication_error"
    if status == 403:
        return "permission_error"
    if status == 429:
        return "rate_limit_error"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


def openai_status(status: int) -> int:
    """422 (the platform's validation status) is OpenAI's 400."""
    return 400 if status == 422 else status


def openai_error(status: int, code: str, message: str, details: dict[str, Any]) -> dict[str, Any]:
    """The body of an error under `/v1`."""
    openai_code = "invalid_api_key" if status == 401 else _OPENAI_CODES.get(code, code)
    return {
        "error": {
            "message": message,
            "type": error_type(status, openai_code),
            "param": _param(details),
            "code": openai_code,
        }
    }


def _param(details: dict[str, Any]) -> str | None:
    """The request field at fault: an explicit `param`/`field`, else the first validation error's location."""
    for key in ("param", "field"):
        if isinstance(details.get(key), str):
            return str(details[key])
    errors = details.get("errors")
    if isinstance(errors, list) and errors:
        loc = [str(p) for p in errors[0].get("loc", []) if p != "body"]
        return ".".join(loc) or None
    return None
