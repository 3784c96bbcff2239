"""Following a run's AG-UI events over SSE. A dropped connection reconnects with `Last-Event-ID`: the server sends
exactly what came after the last event seen, so no text is repeated or lost (a relay that replays anyway is
deduplicated by id)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx

from personal_agent.terminal.client import Api, ClientError

RETRIES = 8


def is_terminal(event: dict[str, Any]) -> bool:
    """The run is over: finished (not waiting on a person), failed, or its wait expired."""
    kind = event.get("type")
    if kind == "RUN_ERROR":
        return True
    if kind == "RUN_FINISHED":
        outcome = event.get("outcome") or {}
        return not (isinstance(outcome, dict) and outcome.get("type") == "interrupt")
    return kind == "CUSTOM" and event.get("name") == "resume_expired"


def _frames(response: httpx.Response) -> Iterator[tuple[str | None, dict[str, Any]]]:
    event_id: str | None = None
    data: list[str] = []
    for line in response.iter_lines():
        if line == "":
            if data:
                yield event_id, json.loads("\n".join(data))
            event_id, data = None, []
        elif line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())


class RunFollower:
    """Reads one run's events to its end, across dropped connections; `last_id` is where it would resume."""

    def __init__(self, api: Api, events_url: str, last_id: str | None = None) -> None:
        self.api = api
        self.events_url = events_url
        self.last_id = last_id
        self.seen: set[str] = set()
        self.reconnects = 0

    def _open(self, http: httpx.Client) -> Any:
        headers = dict(self.api.headers)
        if self.last_id:
            headers["Last-Event-ID"] = self.last_id
        return http.stream("GET", self.events_url, headers=headers, timeout=httpx.Timeout(30, read=120))

    def _ended(self) -> bool:
        run_url = self.events_url.removesuffix("/events")
        try:
            status = self.api.call("GET", run_url).get("status")
        except ClientError:
            return False
        return status in {"succeeded", "failed", "cancelled", "skipped"}

    def events(self) -> Iterator[dict[str, Any]]:
        failures = 0
        with httpx.Client(base_url=self.api.url) as http:
            while True:
                try:
                    with self._open(http) as response:
                        if response.status_code != 200:
                            response.read()
                            raise ClientError(f"cannot follow the run: {response.status_code} {response.text[:200]}")
                        got = 0
                        for event_id, event in _frames(response):
                            got += 1
                            if event_id is not None:
                                if event_id in self.seen:
                                    continue
                                self.seen.add(event_id)
                                self.last_id = event_id
                            failures = 0
                            yield event
                            if is_terminal(event):
                                return
                    # Closed cleanly with no terminal event: ask again from the last id; stop only once a
                    # connection brings nothing new and the run has ended.
                    if got == 0 and self._ended():
                        return
                    if got:
                        continue
                except httpx.HTTPError as exc:
                    failures += 1
                    if failures > RETRIES:
                        raise ClientError(f"lost the connection to {self.api.url}: {exc}") from exc
                self.reconnects += 1
                time.sleep(min(0.2 * 2**failures, 5.0))  # backoff before reconnecting, not a wait for an outcome
