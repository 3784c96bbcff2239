"""An open stream keeps its caller's access under review: offboarding (a removed or disabled membership, a
disabled account) ends streams that were already open, within one heartbeat, not only new requests; so does losing
what let them read it (a member of a project removed from it, for a run of its chats)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable

from ag_ui.core import CustomEvent

from personal_agent.engine.emitter import encode
from personal_agent.errors import Forbidden, NotFound
from personal_agent.events import custom
from personal_agent.identity.principal import Principal
from personal_agent.stream.relay import sse


async def while_permitted(
    principal: Principal,
    frames: AsyncIterator[str],
    every: float,
    still_readable: Callable[[], Awaitable[object]] | None = None,
) -> AsyncIterator[str]:
    """Yield `frames`, re-checking the caller's membership (and `still_readable`, which raises 404 once they may
    no longer read the stream) at least every `every` seconds (an idle stream sends a ping each heartbeat, so the
    check runs then); on refusal send CUSTOM `access_revoked` and stop."""
    from personal_agent.identity.members import ensure_member_active

    checked = time.monotonic()
    async for frame in frames:
        if time.monotonic() - checked >= every:
            checked = time.monotonic()
            try:
                await ensure_member_active(principal.org_id, principal.user_id)
                if still_readable is not None:
                    await still_readable()
            except (Forbidden, NotFound) as refused:
                value = {"code": refused.code, "message": refused.message}
                custom.check("run", "access_revoked", value)
                revoked = CustomEvent(name="access_revoked", value=value)
                yield sse(None, encode(revoked))
                return
        yield frame
