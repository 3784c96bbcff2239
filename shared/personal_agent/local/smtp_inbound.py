"""`pa dev`'s inbound e-mail: an SMTP server on loopback (`PA_SMTP_PORT`, aiosmtpd) that hands every message it
accepts to the e-mail channel, as SES's receipt rule does on AWS. It serves on the app's own event loop (the runs it
starts are this process's, stopped with it)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger("personal_agent.local.smtp")


class _Handler:
    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 (aiosmtpd's name)
        from personal_agent.channels.email_channel import receive

        try:
            await receive(bytes(envelope.original_content or envelope.content), list(envelope.rcpt_tos))
        except Exception:  # the sender gets a temporary failure to retry, never a dropped connection
            log.exception("an inbound e-mail could not be taken")
            return "451 Requested action aborted: local error in processing"
        return "250 Message accepted"


async def serve_smtp(port: int) -> asyncio.Server:
    """Listen on 127.0.0.1:`port` until the returned server is closed."""
    from aiosmtpd.smtp import SMTP

    handler = _Handler()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: SMTP(handler, hostname="pa-dev", data_size_limit=10 * 1024 * 1024), "127.0.0.1", port
    )
    log.info("inbound e-mail on smtp://127.0.0.1:%d", port)
    return server
