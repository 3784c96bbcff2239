"""Long answers and rate limits for the channels that stream (Slack, Telegram). An answer longer than one message
(Slack's 3,900 characters here, Telegram's 4,096) is posted as pieces in the same thread, each cut at a paragraph
break (else a line break, else a space) and not inside a code fence where a break before the fence exists; as the
answer grows, only the pieces that changed are edited and new ones posted. A call the service refuses for its rate
limit (Slack's 429 with `Retry-After`, Telegram's `retry_after`) is made again after that wait (bounded), so the
follower does not end with half an answer."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TypeVar

log = logging.getLogger("personal_agent.channels")
T = TypeVar("T")
ATTEMPTS = 4
MAX_WAIT_SECONDS = 30.0
"""The longest a rate limit is waited out before the same call is made again."""
FENCE = "```"


def _cut(window: str) -> int:
    """Where to end a piece whose window (the next `limit` characters) is all it may hold."""
    for sep in ("\n\n", "\n", " "):
        at = window.rfind(sep)
        if at >= len(window) // 2:
            cut = at + len(sep)
            if window.count(FENCE, 0, cut) % 2 == 1:  # inside a code fence: end before the fence opens instead
                before = window.rfind("\n", 0, window.rfind(FENCE, 0, cut))
                if before > 0:
                    return before + 1
            return cut
    return len(window)


def split(text: str, limit: int) -> list[str]:
    """`text` as pieces of at most `limit` characters, joined back the same; a piece once followed by another stays
    as it is while the text grows (it is cut within its own window)."""
    pieces: list[str] = []
    while len(text) > limit:
        cut = _cut(text[:limit])
        pieces.append(text[:cut])
        text = text[cut:]
    return [*pieces, text]


async def retrying(call: Callable[[], Awaitable[T]], wait_of: Callable[[Exception], float | None]) -> T:
    """`call()`, made again after the wait a rate limit asks for (`wait_of`: None for any other error)."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return await call()
        except Exception as error:
            wait = wait_of(error)
            if wait is None or attempt == ATTEMPTS:
                raise
            log.info("a channel's rate limit: waiting before the same call", extra={"wait": wait})
            await asyncio.sleep(min(max(wait, 0.0), MAX_WAIT_SECONDS))
    raise AssertionError("unreachable")


def slack_wait(error: Exception) -> float | None:
    """Slack's 429: `slack_sdk`'s `SlackApiError` with the `Retry-After` header's seconds."""
    from slack_sdk.errors import SlackApiError

    if not isinstance(error, SlackApiError) or error.response.status_code != 429:
        return None
    headers = {k.lower(): v for k, v in (error.response.headers or {}).items()}
    value = headers.get("retry-after", "1")
    value = value[0] if isinstance(value, list) else value
    try:
        return float(value)
    except ValueError:
        return 1.0


def telegram_wait(error: Exception) -> float | None:
    """Telegram's 429: python-telegram-bot's `RetryAfter` (the Bot API's `parameters.retry_after`)."""
    from telegram.error import RetryAfter

    if not isinstance(error, RetryAfter):
        return None
    value = error.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


class Pieces:
    """Messages posted as pieces: the first piece's handle names the whole; the rest follow it in the thread."""

    def __init__(self, limit: int, send: Callable[[str], Awaitable[str]], edit: Callable[[str, str], Awaitable[None]]):
        self.limit = limit
        self.send = send
        self.edit = edit
        self.shown: dict[str, list[tuple[str, str]]] = {}
        """A first piece's handle -> each piece's (handle, text) as posted."""

    async def post(self, text: str) -> str:
        first, *_ = split(text, self.limit)
        handle = await self.send(first)
        self.shown[handle] = [(handle, first)]
        await self.update(handle, text)
        return handle

    async def update(self, handle: str, text: str) -> None:
        shown = self.shown.setdefault(handle, [(handle, "")])
        for n, piece in enumerate(split(text, self.limit)):
            if n >= len(shown):
                if not piece.strip():  # a break the text ends on: its piece waits for words
                    break
                shown.append((await self.send(piece), piece))
            elif shown[n][1] != piece:
                await self.edit(shown[n][0], piece)
                shown[n] = (shown[n][0], piece)
