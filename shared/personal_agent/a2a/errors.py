"""Our errors as a2a-sdk's JSON-RPC errors, each with the stable `code` (and HTTP status) the REST API would give
in its `data`: bad input is `InvalidParamsError`, a context (chat) that is not the caller's `InvalidParamsError`
with `chat_not_found`, anything else the caller can act on (a busy chat, over budget, too many open streams, a
service down) `InvalidRequestError`. Never an internal error for bad input."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from a2a.utils.errors import A2AError, InvalidParamsError, InvalidRequestError

from personal_agent.errors import AppError

_PARAMS = {400, 404, 413, 422}


def as_a2a_error(error: AppError) -> A2AError:
    data = {"code": error.code, "status": error.status, **{k: v for k, v in error.details.items() if _plain(v)}}
    if error.status in _PARAMS:
        return InvalidParamsError(error.message, data=data)
    return InvalidRequestError(error.message, data=data)


def _plain(value: object) -> bool:
    return isinstance(value, str | int | float | bool) or value is None


@asynccontextmanager
async def a2a_errors() -> AsyncIterator[None]:
    """Raise what the block raises as an A2A error (the dispatcher answers it as a JSON-RPC error)."""
    try:
        yield
    except AppError as error:
        raise as_a2a_error(error) from error
