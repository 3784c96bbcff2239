"""A workflow's run history in pages (`GET /workflows/{id}/runs`): newest first, a cursor continues exactly where
the page before ended, and the last page has no cursor (delivery_store.history's keyset)."""

from __future__ import annotations

from typing import Any

import httpx

from tests.auth import auth_headers
from tests.workflows import create_workflow, fire_to_end


async def test_the_run_history_pages_newest_first_without_gaps_or_repeats(
    http: httpx.AsyncClient, make_tenant: Any, echo_model: str
) -> None:
    headers = auth_headers(make_tenant())
    workflow = await create_workflow(http, headers, model=echo_model)
    hook = f"/api/v1/hooks/{workflow['id']}"
    started: list[str] = []
    for _ in range(3):
        response = await fire_to_end(http, hook, workflow["signing_secret"], headers)
        assert response.status_code == 202, response.text
        started.append(response.json()["run_id"])

    runs = f"/api/v1/workflows/{workflow['id']}/runs"
    first = (await http.get(runs, params={"limit": 2}, headers=headers)).json()
    assert [item["run_id"] for item in first["items"]] == started[::-1][:2]
    assert first["next_cursor"]
    second = (await http.get(runs, params={"limit": 2, "cursor": first["next_cursor"]}, headers=headers)).json()
    assert [item["run_id"] for item in second["items"]] == started[:1]
    assert second["next_cursor"] is None
    (oldest,) = second["items"]
    assert (oldest["trigger"], oldest["status"], oldest["status_url"]) == (
        "webhook",
        "succeeded",
        f"/api/v1/runs/{started[0]}",
    )
