"""Announcements on a user's feed (CUSTOM events): what changed for them outside any run's stream, so a page
can follow it without polling. Best effort: the state is in Postgres, and a bus outage never fails the work."""

from __future__ import annotations

import logging
import time
from typing import Any
from uuid import UUID

from personal_agent.bus import get_bus
from personal_agent.bus.key_names import feed_stream
from personal_agent.events import custom
from personal_agent.settings import get_settings

log = logging.getLogger("personal_agent.bus")


async def announce(org_id: UUID | str, user_id: UUID | str, name: str, value: dict[str, Any]) -> None:
    from ag_ui.core import CustomEvent

    custom.check("feed", name, value)  # a developer error, raised where it is made (events/custom.py)
    event = CustomEvent(name=name, value=value, timestamp=int(time.time() * 1000))
    try:
        await get_bus().publish(
            feed_stream(org_id, user_id),
            event.model_dump_json(by_alias=True, exclude_none=True),
            retention_seconds=get_settings().event_retention_seconds,
            maxlen=1000,
        )
    except Exception as exc:  # noqa: BLE001 - reported, never fatal
        log.warning("%s not announced: %s", name, type(exc).__name__)
