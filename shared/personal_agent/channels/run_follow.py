"""Read a channel's run back: the same AG-UI stream every adapter reads (`stream.relay`), answered into the thread as
it arrives: text posted, then updated at most once a second while it grows (within Slack's and Telegram's rate
limits); approvals offered where the run pauses (the stream goes on past an interrupt, so the rest of the answer
follows the decision); a failure said in one line. An answer that drew on `search_knowledge` passages ends with
their footnotes (`knowledge.cited.Sources`, numbered as the web chat numbers them), as a `/v1` answer does."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from personal_agent.bus.key_names import run_stream
from personal_agent.channels import post_store
from personal_agent.channels.config_store import ChannelKind
from personal_agent.channels.inbound import Replier
from personal_agent.chats import message_store
from personal_agent.db import org_transaction
from personal_agent.knowledge.cited import SEARCH_TOOL, Sources
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import RunSpec
from personal_agent.stream.relay import relay

log = logging.getLogger("personal_agent.channels")
UPDATE_EVERY_SECONDS = 1.0


@dataclass
class Cursor:
    """How far a follower has read the run's stream: the id of the last event it was handed (None: none yet). A
    later follower goes on from there (`followers`)."""

    at: str | None = None


async def events(spec: RunSpec, cursor: Cursor | None = None) -> AsyncIterator[dict[str, Any]]:
    """The run's AG-UI events from its first (or after `cursor`) until its terminal one (or the relay's lifetime)."""

    async def not_gone() -> bool:
        return False

    settings = get_settings()
    cursor = cursor or Cursor()
    frames = relay(
        run_stream(spec.org_id, spec.run_id),
        cursor.at,
        heartbeat=settings.sse_heartbeat_seconds,
        max_lifetime=settings.sse_max_lifetime_seconds,
        is_gone=not_gone,
    )
    async for chunk in frames:
        for line in chunk.split("\n"):
            if line.startswith("id: "):
                cursor.at = line[4:]
            elif line.startswith("data: "):
                yield json.loads(line[6:])


class _Answer:
    """The text of one stretch of a run (from a RUN_STARTED to its RUN_FINISHED), posted and updated; the posted
    message is remembered as the run's answer (a reaction to it rates the run)."""

    def __init__(self, replier: Replier, spec: RunSpec) -> None:
        self.replier = replier
        self.spec = spec
        self.text = ""
        self.shown = ""
        self.handle: str | None = None
        self.last = 0.0

    async def add(self, delta: str) -> None:
        self.text += delta
        if self.replier.streams and time.monotonic() - self.last >= UPDATE_EVERY_SECONDS:
            await self.show()

    async def show(self) -> None:
        if not self.text.strip() or self.text == self.shown:
            return
        if self.handle is None:
            self.handle = await self.replier.post(self.text)
            await _remember(self.spec, self.replier.post_key(self.handle))
        else:
            await self.replier.update(self.handle, self.text)
        self.shown, self.last = self.text, time.monotonic()


async def _remember(spec: RunSpec, key: str | None) -> None:
    if key is None or spec.trigger_source not in ("slack", "telegram"):
        return
    async with org_transaction(spec.org_id) as conn:
        kind: ChannelKind = "slack" if spec.trigger_source == "slack" else "telegram"
        await post_store.remember(conn, spec.org_id, kind, key, spec.run_id)


@dataclass
class _Cited:
    """The passages the run's knowledge searches returned while it was followed (their calls' ids, then results)."""

    searches: set[str]
    sources: Sources

    @classmethod
    async def of_run(cls, spec: RunSpec, cursor: Cursor | None) -> _Cited:
        """A follower that goes on from `cursor` (a run resumed later) starts with what the run had cited so far."""
        if cursor is None or cursor.at is None:
            return cls(set(), Sources())
        async with org_transaction(spec.org_id) as conn:
            messages = await message_store.run_messages(conn, spec.run_id)
        return cls(set(), Sources.of_messages(messages))

    def feed(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "TOOL_CALL_START" and event.get("toolCallName") == SEARCH_TOOL:
            self.searches.add(str(event.get("toolCallId")))
        elif kind == "TOOL_CALL_RESULT" and str(event.get("toolCallId")) in self.searches:
            self.sources.add(event.get("content"))

    def close(self, answer: _Answer) -> None:
        """The footnotes at the end of the run's last answer (none under an answer that is JSON, or no answer)."""
        if answer.spec.answer_schema is None:
            answer.text = self.sources.appended_to(answer.text)


async def answer(spec: RunSpec, replier: Replier, cursor: Cursor | None = None) -> str:
    """Answer the run into the thread (from `cursor` on, which follows what was read); its last event's type
    (RUN_FINISHED, RUN_ERROR) or `ended` without one (the relay's lifetime)."""
    current, cited = _Answer(replier, spec), await _Cited.of_run(spec, cursor)
    async for event in events(spec, cursor):
        kind = event.get("type")
        cited.feed(event)
        if kind == "RUN_STARTED":
            current = _Answer(replier, spec)
        elif kind == "TEXT_MESSAGE_START" and current.text.strip():
            current.text += "\n\n"  # the run's messages of one stretch, as paragraphs
        elif kind == "TEXT_MESSAGE_CONTENT":
            await current.add(str(event.get("delta", "")))
        elif kind == "CUSTOM" and event.get("name") == "approval_requested":
            await current.show()
            await replier.ask_approval(event["value"])
        elif kind == "CUSTOM" and event.get("name") == "question_asked":
            await current.show()
            await replier.ask_question(event["value"])
        elif kind == "RUN_FINISHED":
            if (outcome := (event.get("outcome") or {}).get("type")) != "interrupt":
                if outcome != "cancelled":
                    cited.close(current)
                await current.show()
                return "RUN_FINISHED"
            await current.show()
            current = _Answer(replier, spec)  # a resumed run starts no RUN_STARTED: its answer is a new message
        elif kind == "RUN_ERROR":
            await current.show()
            await replier.notice(f"The run failed: {event.get('message') or 'an error'}")
            return "RUN_ERROR"
    log.info("a channel's run stream ended before its run", extra={"run_id": str(spec.run_id)})
    return "ended"
