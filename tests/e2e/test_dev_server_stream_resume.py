"""On `pa dev` as a user runs it, with events appended in batches (the default): a reader that drops while a
run streams and reconnects with the last `id:` it saw gets exactly the rest, at any cut point."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.e2e.pa_dev import DevServer
from tests.sse import read_events

# The offline demo model quotes the message back word by word: a long message makes a long stream of deltas.
MESSAGE = "please echo " + " ".join(f"w{i}" for i in range(60))


@pytest.mark.timeout(240)
async def test_a_dropped_reader_resumes_exactly_from_its_last_event_id(dev_server: DevServer) -> None:
    async with httpx.AsyncClient(base_url=dev_server.url, timeout=60) as http:
        for cut in (1, 4, 15, 33, 60):
            chat = await http.post("/api/v1/chats", json={"title": "resume"}, headers=dev_server.auth)
            started = await http.post(
                f"/api/v1/chats/{chat.json()['id']}/runs",
                json={"message": MESSAGE, "mode": "inline"},
                headers=dev_server.auth,
            )
            assert started.status_code == 202, started.text
            url = started.json()["events_url"]
            full, head = await asyncio.gather(
                read_events(http, url, dev_server.auth), read_events(http, url, dev_server.auth, limit=cut)
            )
            rest = await read_events(http, url, dev_server.auth, last_event_id=head[-1].id)
            assert full[-1].type == "RUN_FINISHED"
            assert sum(f.type == "TEXT_MESSAGE_CONTENT" for f in full) > 60
            assert head + rest == full, f"cut at {cut}"
