"""Publishing a run's AG-UI events to its Redis stream, and run announcements to the owner's feed."""

from __future__ import annotations

import time
from typing import Any

from ag_ui.core import BaseEvent, CustomEvent

from personal_agent.bus import EventBus, get_bus
from personal_agent.bus.keys import feed_stream, run_stream
from personal_agent.runs.spec import RunSpec
from personal_agent.settings import get_settings


def encode(event: BaseEvent) -> str:
    """The one JSON encoding of an AG-UI event, on the bus and on the wire."""
    return event.model_dump_json(by_alias=True, exclude_none=True)


class RunEmitter:
    """Appends events to `pa:{org}:run:{run_id}`; the entry id becomes the SSE `id:`."""

    def __init__(self, spec: RunSpec, bus: EventBus | None = None) -> None:
        self.spec = spec
        self.bus = bus or get_bus()
        self.stream = run_stream(spec.org_id, spec.run_id)
        settings = get_settings()
        self.retention = settings.event_retention_seconds
        self.maxlen = settings.event_stream_maxlen
        self.last_id: str | None = None

    async def emit(self, *events: BaseEvent) -> None:
        for event in events:
            if event.timestamp is None:
                event.timestamp = int(time.time() * 1000)
            self.last_id = await self.bus.publish(
                self.stream, encode(event), retention_seconds=self.retention, maxlen=self.maxlen
            )

    async def announce(self, name: str, value: dict[str, Any]) -> None:
        """Tell the chat owner's feed (other tabs, runs started by webhooks) about this run."""
        if self.spec.user_id is None:
            return
        event = CustomEvent(name=name, value=value, timestamp=int(time.time() * 1000))
        await self.bus.publish(
            feed_stream(self.spec.org_id, self.spec.user_id),
            encode(event),
            retention_seconds=self.retention,
            maxlen=1000,
        )
