"""The upload of `POST /api/v1/me/import`, either way a client sends it: the file itself as the body with `?format=`
(what clients did first), or a multipart form with a `format` field and a `file`. The body is read to at most
`MAX_IMPORT_BYTES` (plus a form's framing) whatever `Content-Length` claims (413 `import_too_large` past it), and a
form is parsed from those bytes only."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from fastapi import Request
from starlette.datastructures import UploadFile

from personal_agent.errors import InvalidInput

MAX_IMPORT_BYTES = 5 * 1024 * 1024
_FORM_FRAMING = 64 * 1024

REQUEST_BODY: dict[str, Any] = {
    "required": True,
    "content": {
        "application/json": {"schema": {"type": "array", "description": "a `conversations.json`, with `?format=`"}},
        "application/zip": {"schema": {"type": "string", "format": "binary"}},
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["format", "file"],
                "properties": {
                    "format": {"type": "string", "enum": ["chatgpt", "claude", "personal-agent"]},
                    "file": {"type": "string", "format": "binary"},
                },
            }
        },
    },
}


def _too_large() -> InvalidInput:
    return InvalidInput(
        f"the file is larger than {MAX_IMPORT_BYTES // (1024 * 1024)} MB", code="import_too_large", status=413
    )


async def _body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_large()
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise _too_large()
    return bytes(body)


async def _form(request: Request, body: bytes) -> tuple[str | None, bytes]:
    from starlette.formparsers import MultiPartException, MultiPartParser

    async def replay() -> AsyncGenerator[bytes, None]:
        yield body

    try:
        form = await MultiPartParser(request.headers, replay(), max_files=1, max_fields=4).parse()
    except MultiPartException as exc:
        raise InvalidInput(f"the form could not be read: {exc.message}", code="import_invalid") from None
    try:
        upload, kind = form.get("file"), form.get("format")
        if not isinstance(upload, UploadFile):
            raise InvalidInput("the form has no `file`", code="import_invalid")
        data = await upload.read()
    finally:
        await form.close()
    if len(data) > MAX_IMPORT_BYTES:
        raise _too_large()
    return (kind if isinstance(kind, str) else None), data


async def read_upload(request: Request, query_format: str | None) -> tuple[str, bytes]:
    """The import's format and file."""
    is_form = request.headers.get("content-type", "").lower().startswith("multipart/form-data")
    body = await _body(request, MAX_IMPORT_BYTES + (_FORM_FRAMING if is_form else 0))
    kind, data = await _form(request, body) if is_form else (None, body)
    chosen = kind or query_format
    if chosen is None:
        raise InvalidInput(
            "say which export this is: `format` chatgpt, claude or personal-agent", code="import_format_unknown"
        )
    return chosen, data
