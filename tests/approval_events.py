"""Waiting for a run's approval request on its event stream."""

from __future__ import annotations

import uuid

import httpx

from tests.sse import Frame, read_events


async def approval_requested(http: httpx.AsyncClient, headers: dict[str, str], run_id: uuid.UUID) -> Frame:
    """The run's first `approval_requested` event, read from its stream as it comes."""
    frames: list[Frame] = []
    while not any(f.data.get("name") == "approval_requested" for f in frames):
        frames = await read_events(http, f"/api/v1/runs/{run_id}/events", headers, limit=len(frames) + 1)
    return next(f for f in frames if f.data.get("name") == "approval_requested")
