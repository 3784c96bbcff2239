"""One principal dependency (`api/deps.py`) for the API's routes and the stream function's: the same caller, the
same refusals with the same codes, and a token in the URL taken only by GET event streams (and kept out of the
request from then on)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.auth import auth_headers


async def test_the_api_and_the_streams_know_the_caller_the_same_way(http: httpx.AsyncClient, make_tenant: Any) -> None:
    owner = auth_headers(make_tenant())
    token = owner["Authorization"].split()[1]
    chat = await http.post("/api/v1/chats", json={"title": "principal"}, headers=owner)
    assert chat.status_code == 201, chat.text
    chat_id = chat.json()["id"]
    api_route, stream_route = "/api/v1/chats", f"/api/v1/chats/{chat_id}/runs/stream"
    # A token in the URL of anything but a GET event stream: refused alike, with or without the header.
    for headers in ({}, owner):
        api = await http.get(f"{api_route}?access_token={token}", headers=headers)
        stream = await http.post(f"{stream_route}?access_token={token}", json={"message": "hi"}, headers=headers)
        for response in (api, stream):
            assert (response.status_code, response.json()["code"]) == (400, "token_in_query"), response.text
    # No credentials, or a malformed header: the same answer from both.
    for headers, status, code in (({}, 401, "missing_token"), ({"Authorization": "Basic x"}, 401, None)):
        api = await http.get(api_route, headers=headers)
        stream = await http.post(stream_route, json={"message": "hi"}, headers=headers)
        assert api.status_code == stream.status_code == status
        assert api.json()["code"] == stream.json()["code"] == (code or api.json()["code"])
    # A GET event stream takes the token from the URL (EventSource cannot set headers): the caller is known.
    events = await http.get(f"/api/v1/runs/{uuid.uuid4()}/events?access_token={token}")
    assert (events.status_code, events.json()["code"]) == (404, "run_not_found"), events.text
