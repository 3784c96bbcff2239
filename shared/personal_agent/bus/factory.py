"""The process's bus, chosen from settings: Upstash REST when configured, else Redis over TCP."""

from __future__ import annotations

import asyncio

from personal_agent.bus.base import EventBus
from personal_agent.errors import ConfigurationError
from personal_agent.secret_env import ensure_secrets_loaded
from personal_agent.settings import get_settings

_buses: dict[int, EventBus] = {}


def get_bus() -> EventBus:
    """The bus for the running event loop (clients are bound to the loop they were made on)."""
    key = id(asyncio.get_running_loop())
    bus = _buses.get(key)
    if bus is None:
        ensure_secrets_loaded()  # on AWS the Upstash token comes from Secrets Manager, fetched on first use
        settings = get_settings()
        if settings.upstash_url and settings.upstash_token:
            from personal_agent.bus.upstash import UpstashBus

            bus = UpstashBus(settings.upstash_url, settings.upstash_token)
        elif settings.redis_url:
            from personal_agent.bus.redis_streams import RedisStreamsBus

            bus = RedisStreamsBus(settings.redis_url)
        else:
            raise ConfigurationError("no event bus: set REDIS_URL or UPSTASH_REDIS_REST_URL/_TOKEN, or run `pa dev`")
        _buses[key] = bus
    return bus


async def reset_bus() -> None:
    """Close and forget the running loop's bus (tests, settings changes)."""
    bus = _buses.pop(id(asyncio.get_running_loop()), None)
    if bus is not None:
        await bus.close()
