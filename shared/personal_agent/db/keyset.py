"""Opaque keyset cursors: the sort key of the last row a page returned (a time and an id), for the next page."""

from __future__ import annotations

import base64
import json
from datetime import datetime
from uuid import UUID

from personal_agent.errors import InvalidInput

MAX_CURSOR_CHARS = 512


def encode_cursor(at: datetime, row_id: UUID | int) -> str:
    """The cursor after a row sorted by (`at`, `row_id`)."""
    raw = json.dumps([at.isoformat(), str(row_id)]).encode()
    return base64.urlsafe_b64encode(raw).decode()


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    """(`at`, the id as text); 422 `invalid_cursor` for anything a client forged or mangled."""
    try:
        if len(cursor) > MAX_CURSOR_CHARS:
            raise ValueError("too long")
        at, row_id = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        return datetime.fromisoformat(at), str(row_id)
    except (ValueError, TypeError, AttributeError, RecursionError) as exc:  # whatever a forged cursor holds
        raise InvalidInput("the cursor is not valid", code="invalid_cursor") from exc


def decode_uuid_cursor(cursor: str) -> tuple[datetime, UUID]:
    at, row_id = decode_cursor(cursor)
    try:
        return at, UUID(row_id)
    except ValueError as exc:
        raise InvalidInput("the cursor is not valid", code="invalid_cursor") from exc
