"""Publishing a run's AG-UI events to its Redis stream, and run announcements to the owner's feed.

Text and tool-argument deltas are coalesced: a timer sends what waits one batch window after the first one
(`event_batch_ms`, wider while many runs of this process stream: `engine.batch_window`), in one pipelined round
trip, in order; while that batch is on its way the next one gathers. So batches grow with load instead of
shrinking: a busy event loop runs the timer late, and flushing at once whenever the window had passed (as this
did) sent one or two events per round trip under load, with an XREAD for each on the relay's side. A producer
that never lets the timer run still sends once `INLINE_BATCH` events waited a window. Every other event (a
message's start and end, a step's end, a run's end)
sends what waits together with itself before `emit` returns, so a step never ends with events still held back, and
`last_id` is the id of the newest event at every checkpoint. The first delta after a message or tool call starts
goes at once too, so the window never delays the first token a reader sees, only the ones after it. A batch is
one stream entry (one XADD, whatever its size: `bus.publish_scripts`), and every event in it has an id of its own
(`bus.entry_ids`: `<entry id>.<index>`, the last one the entry id), so `Last-Event-ID` resumes between any two
events exactly as before.

A bus that does not answer is waited out (`bus.stream_writer`: up to `PA_DEPENDENCY_RETRY_SECONDS`, never an
event twice, lost ones sent again): events made meanwhile wait behind the batch on its way, at most MAX_PENDING of
them before `emit` waits too. Past the bound `DependencyUnavailable` is raised where the engine pauses the run; the
events not sent stay pending, in order.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import orjson
from ag_ui.core import BaseEvent, CustomEvent, EventType, TextMessageContentEvent

from personal_agent.bus import EventBus, get_bus
from personal_agent.bus.key_names import feed_stream, run_stream
from personal_agent.bus.stream_writer import StreamWriter
from personal_agent.engine import batch_window
from personal_agent.events import custom
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import RunSpec

log = logging.getLogger(__name__)
DELTAS = frozenset(
    {
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TOOL_CALL_ARGS,
        EventType.REASONING_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_CHUNK,
        EventType.TOOL_CALL_CHUNK,
    }
)
OPENERS = frozenset({EventType.TEXT_MESSAGE_START, EventType.TOOL_CALL_START, EventType.REASONING_MESSAGE_START})
MAX_BATCH = 256
INLINE_BATCH = 64
MAX_PENDING = 5_000  # events held while the bus is out, before `emit` waits for it


def encode(event: BaseEvent) -> str:
    """The one JSON encoding of an AG-UI event, on the bus and on the wire.

    A text delta, nearly every event of a run, is written directly (the same bytes as the model's own JSON,
    a test checks: ~1 us instead of ~7 us, the model's serializer being a Python wrap over every field)."""
    if (
        type(event) is TextMessageContentEvent
        and event.raw_event is None
        and event.metadata is None
        and event.subagent_run_id is None
    ):
        fields: dict[str, Any] = {"type": "TEXT_MESSAGE_CONTENT"}
        if event.timestamp is not None:
            fields["timestamp"] = event.timestamp
        fields["messageId"] = event.message_id
        fields["delta"] = event.delta
        try:
            return orjson.dumps(fields).decode()
        except orjson.JSONEncodeError:  # text orjson refuses (a lone surrogate): the model's own encoder decides
            pass
    return event.model_dump_json(by_alias=True, exclude_none=True)


class RunEmitter:
    """Appends events to `pa:{org}:run:{run_id}`, a batch per entry; each event's item id becomes its SSE `id:`."""

    def __init__(self, spec: RunSpec, bus: EventBus | None = None) -> None:
        self.spec = spec
        self.bus = bus or get_bus()
        self.stream = run_stream(spec.org_id, spec.run_id)
        settings = get_settings()
        self.retention = settings.event_retention_seconds
        self.maxlen = settings.event_stream_maxlen
        self.batch_seconds = settings.event_batch_ms / 1000
        self.last_id: str | None = None
        self._writer = StreamWriter(
            self.bus, self.stream, retention_seconds=self.retention, maxlen=self.maxlen, what="publishing run events"
        )
        self._pending: list[str] = []
        self._first_at = 0.0
        self._lock = asyncio.Lock()
        self._timer: asyncio.TimerHandle | None = None
        self._background: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None
        self._opened = False  # a message or tool call started and no delta of it was sent yet

    async def emit(self, *events: BaseEvent) -> None:
        """Publish `events` in order: deltas by the batch timer (`event_batch_ms`, later under load), anything else
        (and what waits) at once."""
        urgent = False
        for event in events:
            if type(event) is CustomEvent:  # every CUSTOM value is its registered model's (events/custom.py)
                custom.check("run", event.name, event.value)
            if event.timestamp is None:
                event.timestamp = int(time.time() * 1000)
            if not self._pending:
                self._first_at = time.monotonic()
                batch_window.gathering(self)
            self._pending.append(encode(event))
            delta = event.type in DELTAS
            urgent = urgent or not delta or self._opened  # a first delta goes at once: the first token is not held
            self._opened = event.type in OPENERS
        if urgent or not self.batch_seconds or len(self._pending) >= MAX_BATCH or self._failure is not None:
            await self.flush()  # (a background flush that failed raises here, where the engine fails the run)
        elif len(self._pending) >= MAX_PENDING:
            await self.flush()  # the bus is out and the batch on its way waits for it: so does the producer
        elif self._background is not None:
            return  # a batch is on its way; when it lands, the timer starts for what gathered meanwhile
        elif len(self._pending) >= INLINE_BATCH and time.monotonic() - self._first_at >= self.batch_seconds:
            await self.flush()  # the timer could not run (this producer never waits): send what it made
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(
                batch_window.window(self.batch_seconds), self._flush_later
            )

    async def flush(self) -> None:
        """Publish every waiting event now (one round trip); re-raise a failure of a background flush."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        async with self._lock:
            failure, self._failure = self._failure, None
            if failure is not None:
                raise failure
            batch, self._pending = self._pending, []
            if not batch:
                return
            batch_window.sent(self)
            try:
                ids = await self._writer.send(batch, final=batch[-1].startswith('{"type":"RUN_'))
            except BaseException:
                self._pending[:0] = batch  # not sent: they stay first, in order
                raise
            self.last_id = ids[-1]

    def _flush_later(self) -> None:
        self._timer = None
        self._background = asyncio.get_running_loop().create_task(self._flush_in_background())

    async def _flush_in_background(self) -> None:
        try:
            await self.flush()
        except Exception as exc:  # kept for the engine's next emit, which raises it where it can fail the run
            log.warning("publishing a batch of run events failed: %s", type(exc).__name__)
            self._failure = exc
        finally:
            self._background = None
            if self._pending and self._timer is None and self._failure is None:
                # What gathered while this batch was on its way goes one window after its first event, so the
                # round trip counts towards its wait (a fast stream is not held a round trip longer per batch).
                waited = time.monotonic() - self._first_at
                wait = max(0.0, batch_window.window(self.batch_seconds) - waited)
                self._timer = asyncio.get_running_loop().call_later(wait, self._flush_later)

    async def announce(self, name: str, value: dict[str, Any]) -> None:
        """Tell the chat owner's feed (other tabs, runs started by webhooks) about this run."""
        custom.check("feed", name, value)
        if self.spec.user_id is None:
            return
        event = CustomEvent(name=name, value=value, timestamp=int(time.time() * 1000))
        stream = feed_stream(self.spec.org_id, self.spec.user_id)
        # A writer of its own: sent again after a lost answer, it is still one announcement.
        writer = StreamWriter(self.bus, stream, retention_seconds=self.retention, maxlen=1000, what="announcing a run")
        await writer.send([encode(event)])
