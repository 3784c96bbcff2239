"""An open stream keeps its caller's access under review: offboarding (a removed or disabled membership, a
disabled account) ends streams that were already open, within one heartbeat, not only new requests."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from ag_ui.core import CustomEvent

from personal_agent.engine.emitter import encode
from personal_agent.errors import Forbidden
from personal_agent.events import custom
from personal_agent.identity.principal import Principal
from personal_agent.stream.relay import sse


async def while_permitted(principal: Principal, frames: AsyncIterator[str], every: float) -> AsyncIterator[str]:
    """Yield `frames`, re-checking the caller's membership at least every `every` seconds (an idle stream
    sends a ping each heartbeat, so the check runs then); on refusal send CUSTOM `access_revoked` and stop."""
    from personal_agent.identity.members import ensure_member_active

    checked = time.monotonic()
    async for frame in frames:
        if time.monotonic() - checked >= every:
            checked = time.monotonic()
            try:
                await ensure_member_active(principal.org_id, principal.user_id)
            except Forbidden as refused:
                value = {"code": refused.code, "message": refused.message}
                custom.check("run", "access_revoked", value)
                revoked = CustomEvent(name="access_revoked", value=value)
                yield sse(None, encode(revoked))
                return
        yield frame
