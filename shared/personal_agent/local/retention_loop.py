"""The dev server's stand-in for the daily retention job (EventBridge Scheduler on AWS): every
`PA_RETENTION_INTERVAL_SECONDS` it deletes due temporary chats and chats past their org's retention period
and data exports past their time (`lifecycle.data_retention.sweep_all`)."""

from __future__ import annotations

import logging

from personal_agent.lifecycle.data_retention import sweep_all
from personal_agent.periodic import Periodic
from personal_agent.settings import get_settings

log = logging.getLogger("personal_agent.local.retention_loop")


class RetentionLoop(Periodic):
    def __init__(self, interval: float | None = None) -> None:
        super().__init__("pa-retention", interval or get_settings().retention_interval_seconds, sweep_all, log)
