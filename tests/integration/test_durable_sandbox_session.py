"""A durable run's sandbox session across its steps (the real ASL on moto, the steps handler in-process, the local
sandbox): `run_python` sets a variable and reads a chat file before an approval wait; the step ends, and with it
the process's kernel (the next step could run anywhere), while the session's record and its input file wait in the
run's sandbox prefix of the bucket; after the approval the next step's `run_python` reads the variable and the file
(the record restored: its cells replayed), and when the run ends its prefix is gone, every version."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from personal_agent.knowledge import objects as bucket_objects
from personal_agent.sandbox import run_files, sessions
from tests.auth import auth_headers
from tests.emulators import Emulator
from tests.runs import follow_approving
from tests.scripted import scripted_model

CSV = b"n\n1\n2\n3\n"
BEFORE = "import pandas as pd\nsecret = 6 * 7\ntotal = int(pd.read_csv('numbers.csv').n.sum())\nsecret"
AFTER = "(secret, total, open('numbers.csv').read().count('\\n'))"


async def python_then_email_then_python(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    done = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
    calls = [
        ("run_python", {"code": BEFORE, "files": ["numbers.csv"]}),
        ("send_email", {"to": "bob@example.com", "subject": "the total"}),
        ("run_python", {"code": AFTER}),
    ]
    if len(done) < len(calls):
        name, args = calls[len(done)]
        yield {0: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=f"call_{len(done)}")}
    else:
        result: Any = done[-1].content
        yield f"After the approval: {result['value']} ({result['error']})"


async def _chat_with_file(http: httpx.AsyncClient, headers: dict[str, str]) -> tuple[str, str]:
    chat_id = (await http.post("/api/v1/chats", json={"title": "t"}, headers=headers)).json()["id"]
    body = {"filename": "numbers.csv", "content_type": "text/csv", "size": len(CSV)}
    created = await http.post(f"/api/v1/chats/{chat_id}/attachments", json=body, headers=headers)
    assert created.status_code == 201, created.text
    form = created.json()["upload"]
    async with httpx.AsyncClient() as s3:
        posted = await s3.post(form["url"], data=form["fields"], files={"file": ("numbers.csv", CSV, "text/csv")})
    assert posted.status_code in (200, 201, 204), posted.text
    return str(chat_id), str(created.json()["id"])


def _versions(prefix: str) -> list[str]:
    listed = bucket_objects.client().list_object_versions(Bucket=bucket_objects.bucket(), Prefix=prefix)
    return sorted(v["Key"] for v in [*listed.get("Versions", []), *listed.get("DeleteMarkers", [])])


@pytest.mark.parametrize("durable_aws", ["moto"], indirect=True)  # the bucket is moto's (LocalStack has none)
async def test_a_variable_set_before_an_approval_wait_is_read_after_it(
    http: httpx.AsyncClient, make_tenant: Any, email_tool: list[dict[str, Any]], durable_aws: Emulator
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    chat_id, attachment_id = await _chat_with_file(http, headers)
    waiting: dict[str, Any] = {}
    with scripted_model(python_then_email_then_python) as (model, _):
        body: dict[str, Any] = {"message": "add them up, mail bob, then check", "model": model, "mode": "durable"}
        body |= {"tools": ["run_python", "send_email"], "attachments": [attachment_id]}
        started = await http.post(f"/api/v1/chats/{chat_id}/runs", json=body, headers=headers)
        assert started.status_code == 202, started.text
        prefix = run_files.run_prefix(tenant.org_id, started.json()["run_id"])

        def while_waiting() -> None:
            waiting.update(open=sessions.open_sessions(), record=run_files.read_record(prefix), keys=_versions(prefix))

        frames, asked = await follow_approving(http, started.json()["events_url"], headers, while_waiting)
    assert asked and frames[-1].type == "RUN_FINISHED", frames[-1]
    assert waiting["open"] == 0  # the step that asked ended, and the process's kernel with it
    assert waiting["record"] == {
        "cells": [BEFORE],
        "files": {"numbers.csv": run_files.input_key(prefix, "numbers.csv")},
    }
    assert waiting["keys"] == sorted([prefix + "session.json", run_files.input_key(prefix, "numbers.csv")])
    answer = "".join(f.data.get("delta", "") for f in frames if f.type == "TEXT_MESSAGE_CONTENT")
    assert answer == "After the approval: (42, 6, 4) (None)"  # the variables and the file, restored
    assert email_tool == [{"to": "bob@example.com", "subject": "the total"}]
    assert _versions(prefix) == []  # the run ended: its sandbox files are gone, every version
    view = (await http.get(f"/api/v1/runs/{started.json()['run_id']}", headers=headers)).json()
    assert view["sandbox_seconds"] > 0
