"""The one mapping from errors to HTTP: JSON with a stable `code`, a `message` and the request id."""

from __future__ import annotations

import logging
import math
import uuid
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from personal_agent.api import openai_error_shape as error_shape
from personal_agent.errors import AppError, DependencyUnavailable, dependency_outage

log = logging.getLogger("personal_agent.api")

_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
}


def request_id(request: Request) -> str:
    rid: str | None = getattr(request.state, "request_id", None)
    return rid or "-"


def error_body(request: Request, status: int, code: str, message: str, **details: Any) -> JSONResponse:
    """The error as JSON: `{code, message, request_id, details}`, or OpenAI's shape under `/v1/`."""
    body: dict[str, Any] = {"code": code, "message": message, "request_id": request_id(request)}
    if details:
        body["details"] = details
    headers = {"X-Request-Id": request_id(request)}
    retry_after = details.get("retry_after")
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    if error_shape.is_v1(request.url.path):
        body, status = error_shape.openai_error(status, code, message, details), error_shape.openai_status(status)
    return JSONResponse(body, status_code=status, headers=headers)


class RequestIdMiddleware:
    """Give every request an id (API Gateway's behind Mangum, else the caller's `X-Request-Id`, else new)
    and echo it in `X-Request-Id`. Plain ASGI, so streamed responses pass through untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        gateway = (scope.get("aws.event") or {}).get("requestContext", {}).get("requestId")
        incoming = Headers(scope=scope).get("x-request-id", "")
        rid = str(gateway) if gateway else (incoming if 0 < len(incoming) <= 128 else uuid.uuid4().hex)
        scope.setdefault("state", {})["request_id"] = rid

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                if "x-request-id" not in headers:
                    headers.append("X-Request-Id", rid)
            await send(message)

        await self.app(scope, receive, send_with_id)


def install_error_handlers(app: FastAPI) -> None:
    """Register the request-id middleware and every exception handler."""

    app.add_middleware(RequestIdMiddleware)

    @app.exception_handler(AppError)
    async def _app_error(request: Request, exc: AppError) -> JSONResponse:
        return error_body(request, exc.status, exc.code, exc.message, **exc.details)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", "")} for e in exc.errors()]
        return error_body(request, 422, "invalid_input", "the request is not valid", errors=errors)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        return error_body(request, exc.status_code, code, str(exc.detail))

    @app.exception_handler(DependencyUnavailable)
    async def _dependency(request: Request, exc: DependencyUnavailable) -> JSONResponse:
        return dependency_unavailable(request, exc)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        outage = dependency_outage(exc)  # a driver's connection error that no layer mapped: still an outage
        if outage is not None:
            return dependency_unavailable(request, outage)
        log.exception("unhandled error", extra={"request_id": request_id(request)})
        return error_body(request, 500, "internal_error", "an unexpected error occurred")


def dependency_unavailable(request: Request, exc: DependencyUnavailable) -> JSONResponse:
    """503 `dependency_unavailable` with `Retry-After`: the bus or the database is unreachable for now. Never a 500
    (nothing is wrong with the request), and it says which (`details.dependency`), never a host or an error text."""
    log.warning("a dependency is unavailable: %s", exc.dependency, extra={"request_id": request_id(request)})
    return error_body(
        request,
        503,
        DependencyUnavailable.code,
        f"the {exc.dependency} is unavailable; try again shortly",
        dependency=exc.dependency,
        retry_after=math.ceil(exc.retry_after),
    )
