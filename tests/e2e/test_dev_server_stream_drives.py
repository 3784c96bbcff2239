"""`pa dev` in the AWS shape (`PA_INLINE_DRIVER=worker`: inline runs go to the run worker through the local Lambda
dispatch) with streamed runs driven by the process answering them (`PA_STREAM_DRIVES_RUNS`, the default): a run
started with `POST …/runs/stream` whose client goes away mid-answer still ends, whole, and one started with
`POST …/runs` is driven by the run worker to its end. (Which process held each run's lease is checked in-process:
tests/integration/test_stream_drives_runs.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.sse import read_events, response_frames

WORDS = [f"w{i}" for i in range(40)]
MESSAGE = "please echo " + " ".join(WORDS)  # the offline demo model quotes it back word by word


@pytest.fixture(scope="module")
def aws_shaped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    env = {"PA_INLINE_DRIVER": "worker", "PA_DEMO_DELAY_MS": "15"}
    with running_pa_dev(Path(tmp_path_factory.mktemp("pa-dev-stream-drives")), env_extra=env) as server:
        yield server


def _text(frames: list[object]) -> str:
    return "".join(f.data.get("delta", "") for f in frames if f.type == "TEXT_MESSAGE_CONTENT")  # type: ignore[attr-defined]


@pytest.mark.timeout(240)
async def test_a_streamed_run_outlives_its_client_and_a_posted_one_ends_on_the_run_worker(
    aws_shaped: DevServer,
) -> None:
    auth = aws_shaped.auth
    async with httpx.AsyncClient(base_url=aws_shaped.url, timeout=60) as http:
        chat = (await http.post("/api/v1/chats", json={}, headers=auth)).json()["id"]
        body = {"message": MESSAGE, "mode": "inline"}
        async with http.stream("POST", f"/api/v1/chats/{chat}/runs/stream", json=body, headers=auth) as response:
            assert response.status_code == 200, await response.aread()
            head = await response_frames(response, limit=8)  # a few words in, the client goes away
            events_url = response.headers["content-location"]
        assert head[-1].type == "TEXT_MESSAGE_CONTENT"
        frames = await read_events(http, events_url, auth)
        assert frames[-1].type == "RUN_FINISHED"
        assert all(word in _text(frames) for word in WORDS)
        assert (await http.get(events_url.removesuffix("/events"), headers=auth)).json()["status"] == "succeeded"

        chat = (await http.post("/api/v1/chats", json={}, headers=auth)).json()["id"]
        started = await http.post(f"/api/v1/chats/{chat}/runs", json=body, headers=auth)
        assert started.status_code == 202, started.text
        frames = await read_events(http, started.json()["events_url"], auth)
        assert frames[-1].type == "RUN_FINISHED" and all(word in _text(frames) for word in WORDS)
