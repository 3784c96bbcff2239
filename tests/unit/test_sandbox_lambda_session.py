"""The AWS backend's session, kept by the platform (`sandbox/lambda_backend.py`): each call sends the cells that
succeeded before it (the function replays them) and the files, an environment pinned to another org is retried,
and a refusal ends the session. The function itself is stood in for by a recorder of what it was sent."""

from __future__ import annotations

from typing import Any

import pytest

from personal_agent.sandbox.config import SandboxLimits
from personal_agent.sandbox.interface import InFile
from personal_agent.sandbox.lambda_backend import LambdaBackend, LambdaSession


def _session(monkeypatch: pytest.MonkeyPatch, replies: list[dict[str, Any]]) -> tuple[LambdaSession, list[Any]]:
    sent: list[dict[str, Any]] = []

    def invoke(self: LambdaSession, payload: dict[str, Any]) -> dict[str, Any]:
        sent.append(payload)
        return replies.pop(0)

    monkeypatch.setattr(LambdaSession, "_invoke", invoke)
    return LambdaSession("stack-sandbox", "org-a", SandboxLimits()), sent


async def test_each_call_replays_the_cells_that_succeeded(monkeypatch: pytest.MonkeyPatch) -> None:
    ok = {"stdout": "", "stderr": "", "value": None, "error": None, "files": []}
    session, sent = _session(monkeypatch, [ok, {**ok, "error": "NameError: y"}, {**ok, "value": "42"}])
    await session.call("x = 41", (InFile("a.csv", b"a\n1\n"),))
    failed = await session.call("y")
    answered = await session.call("x + 1")
    assert failed.error == "NameError: y" and answered.value == "42"
    assert [p["replay"] for p in sent] == [[], ["x = 41"], ["x = 41"]]  # the failed cell is not replayed
    assert [[f["name"] for f in p["files"]] for p in sent] == [["a.csv"], ["a.csv"], ["a.csv"]]
    assert {p["org_id"] for p in sent} == {"org-a"}


async def test_a_pinned_environment_is_retried_and_a_refusal_ends_the_session(monkeypatch: pytest.MonkeyPatch) -> None:
    pinned = {"error_code": "environment_pinned"}
    session, sent = _session(monkeypatch, [pinned, {"value": "1", "files": []}, pinned, pinned, pinned])
    assert (await session.call("1")).value == "1" and len(sent) == 2
    refused = await session.call("2")
    assert refused.error is not None and "environment_pinned" in refused.error and not session.alive
    assert (await session.call("3")).ended == "ended" and len(sent) == 5  # nothing sent once it ended


def test_without_its_function_name_the_backend_is_unavailable() -> None:
    assert not LambdaBackend("", SandboxLimits()).availability().ok
    assert LambdaBackend("arn:aws:lambda:us-east-1:1:function:s-sandbox", SandboxLimits()).availability().ok
