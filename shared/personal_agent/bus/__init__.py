"""The event bus: one interface, two backends (Redis/Valkey over TCP, Upstash REST)."""

from personal_agent.bus import entry_ids
from personal_agent.bus.base import BusEntry, EventBus
from personal_agent.bus.factory import get_bus, reset_bus

__all__ = ["BusEntry", "EventBus", "entry_ids", "get_bus", "reset_bus"]
