"""The AWS backend's session, kept by the platform (`sandbox/lambda_backend.py`): each call sends the cells that
succeeded before it (the function replays them) and the files (each once), an environment pinned to another org is
retried, a refusal ends the session, a request past Lambda's 6 MB payload is never sent, and a failed invocation
(Lambda's error, the function's, no answer) is the call's error rather than an exception. Lambda itself is stood in
for by a recorder of what it was sent, or by botocore's Stubber in front of a real Lambda client (its error
parsing is what runs)."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import EndpointConnectionError, ReadTimeoutError
from botocore.response import StreamingBody
from botocore.stub import Stubber

from personal_agent import aws_clients
from personal_agent.sandbox import run_files
from personal_agent.sandbox.config import SandboxLimits
from personal_agent.sandbox.interface import InFile
from personal_agent.sandbox.lambda_backend import PAYLOAD_BYTES, LambdaBackend, LambdaSession, files_budget


def _session(monkeypatch: pytest.MonkeyPatch, replies: list[dict[str, Any]]) -> tuple[LambdaSession, list[Any]]:
    sent: list[dict[str, Any]] = []

    def invoke(self: LambdaSession, request: bytes) -> dict[str, Any]:
        sent.append(json.loads(request))
        return replies.pop(0)

    monkeypatch.setattr(LambdaSession, "_invoke", invoke)
    return LambdaSession("stack-sandbox", "org-a", SandboxLimits()), sent


OK: dict[str, Any] = {"stdout": "", "stderr": "", "value": None, "error": None, "files": []}


async def test_each_call_replays_the_cells_that_succeeded(monkeypatch: pytest.MonkeyPatch) -> None:
    session, sent = _session(monkeypatch, [OK, {**OK, "error": "NameError: y"}, {**OK, "value": "42"}])
    await session.call("x = 41", (InFile("a.csv", b"a\n1\n"),))
    failed = await session.call("y")
    answered = await session.call("x + 1")
    assert failed.error == "NameError: y" and answered.value == "42"
    assert [p["replay"] for p in sent] == [[], ["x = 41"], ["x = 41"]]  # the failed cell is not replayed
    assert [[f["name"] for f in p["files"]] for p in sent] == [["a.csv"], ["a.csv"], ["a.csv"]]
    assert {p["org_id"] for p in sent} == {"org-a"}


async def test_a_file_named_again_is_sent_once(monkeypatch: pytest.MonkeyPatch) -> None:
    session, sent = _session(monkeypatch, [OK, OK, OK])
    await session.call("1", (InFile("a.csv", b"old"), InFile("b.csv", b"b")))
    await session.call("2", (InFile("a.csv", b"new"),))
    await session.call("3")
    assert [[f["name"] for f in p["files"]] for p in sent] == [["a.csv", "b.csv"]] * 3
    assert sent[2]["files"][0]["data"] == "bmV3"  # "new": the later version replaced the earlier one


async def test_what_comes_back_fits_lambdas_response(monkeypatch: pytest.MonkeyPatch) -> None:
    limits = SandboxLimits()  # 8 MiB of files per call: as base64, more than Lambda's 6 MB response
    budget = files_budget(limits)
    assert budget < limits.files_bytes and budget * 4 / 3 + 4 * 6 * limits.output_chars < PAYLOAD_BYTES
    session, sent = _session(monkeypatch, [OK])
    await session.call("1")
    assert sent[0]["limits"]["files_bytes"] == budget  # what the kernel may return is capped to it


async def test_a_request_past_the_payload_limit_is_refused_before_it_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    session, sent = _session(monkeypatch, [OK, OK])
    big = InFile("big.bin", b"\0" * 5_000_000)  # 6.7 MB as base64
    refused = await session.call("len(open('big.bin','rb').read())", (big,))
    assert refused.error is not None and "takes 6 MB per call" in refused.error and sent == []
    assert session.alive  # the session goes on without the file
    await session.call("1", (InFile("small.csv", b"a"),))
    assert [f["name"] for f in sent[0]["files"]] == ["small.csv"]


async def test_a_pinned_environment_is_retried_and_a_refusal_ends_the_session(monkeypatch: pytest.MonkeyPatch) -> None:
    pinned = {"error_code": "environment_pinned"}
    session, sent = _session(monkeypatch, [pinned, {"value": "1", "files": []}, pinned, pinned, pinned])
    assert (await session.call("1")).value == "1" and len(sent) == 2
    refused = await session.call("2")
    assert refused.error is not None and "environment_pinned" in refused.error and not session.alive
    assert (await session.call("3")).ended == "ended" and len(sent) == 5  # nothing sent once it ended


@pytest.fixture
def stubbed(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Stubber, Any]]:
    """A real Lambda client behind botocore's Stubber, as the session's `aws_client("lambda", ...)`."""
    client = boto3.client("lambda", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    asked: list[dict[str, Any]] = []

    def factory(service: str, **options: Any) -> Any:
        asked.append(options)
        return client

    monkeypatch.setattr(aws_clients, "aws_client", factory)
    with Stubber(client) as stubber:
        yield stubber, client
    assert all(o["retries"] == {"total_max_attempts": 1} for o in asked)  # never retried: it would run code twice


def _payload(body: dict[str, Any]) -> StreamingBody:
    data = json.dumps(body).encode()
    return StreamingBody(io.BytesIO(data), len(data))


async def test_a_failed_invocation_is_the_calls_error_and_the_session_goes_on(
    stubbed: tuple[Stubber, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    stubber, client = stubbed
    session = LambdaSession("stack-sandbox", "org-a", SandboxLimits())
    stubber.add_response("invoke", {"StatusCode": 200, "Payload": _payload(OK | {"value": "41"})})
    assert (await session.call("x = 41\nx")).value == "41"

    too_large = "Request must be smaller than 6291456 bytes for the InvokeFunction operation"
    stubber.add_client_error("invoke", "RequestTooLargeException", too_large, http_status_code=413)
    crashed = {"errorType": "Sandbox.Timedout", "errorMessage": "Task timed out after 60.00 seconds"}
    stubber.add_response("invoke", {"StatusCode": 200, "FunctionError": "Unhandled", "Payload": _payload(crashed)})
    payload_error = await session.call("y = 1")
    function_error = await session.call("z = 1")
    assert payload_error.error is not None and "RequestTooLargeException" in payload_error.error
    assert function_error.error is not None and "Task timed out after 60.00 seconds" in function_error.error

    def no_answer(**kwargs: Any) -> Any:
        raise ReadTimeoutError(endpoint_url="https://lambda.us-east-1.amazonaws.com")

    with monkeypatch.context() as patched:
        patched.setattr(client, "invoke", no_answer)
        silent = await session.call("w = 1")
    assert silent.error is not None and "did not answer: ReadTimeoutError" in silent.error

    assert session.alive and session.cells == ["x = 41\nx"]  # none of the failed cells is replayed later
    stubber.add_response("invoke", {"StatusCode": 200, "Payload": _payload(OK | {"value": "42"})})
    assert (await session.call("x + 1")).value == "42"


def test_without_its_function_name_the_backend_is_unavailable() -> None:
    assert not LambdaBackend("", SandboxLimits()).availability().ok
    assert LambdaBackend("arn:aws:lambda:us-east-1:1:function:s-sandbox", SandboxLimits()).availability().ok


@pytest.fixture
def bucket(monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """The bucket's side of `run_files` stood in for (S3): what was put, URLs that name their key."""
    stored: dict[str, bytes] = {}
    monkeypatch.setattr(run_files, "put", lambda key, data: stored.__setitem__(key, data))
    monkeypatch.setattr(run_files, "presigned_get", lambda key: f"https://s3.example/{key}?X-Amz-Expires=120")
    monkeypatch.setattr(run_files, "presigned_put", lambda key, wall: f"https://s3.example/{key}?put")
    monkeypatch.setattr(run_files, "addresses", lambda urls: {"s3.example": "192.0.2.1"} if urls else {})
    return stored


async def test_small_files_stay_inline_and_large_ones_go_to_the_bucket_once(
    monkeypatch: pytest.MonkeyPatch, bucket: dict[str, bytes]
) -> None:
    session, sent = _session(monkeypatch, [OK, OK])
    session.prefix = "sandbox/o/r/"
    small, large = InFile("small.csv", b"s" * 1000), InFile("large.bin", b"l" * (run_files.INLINE_BYTES + 1))
    many = tuple(InFile(f"part{i}.csv", b"p" * 200_000) for i in range(6))  # each small, together past 1 MiB
    await session.call("1", (small, large, *many))
    await session.call("2")
    first = {f["name"]: f for f in sent[0]["files"]}
    assert first["small.csv"]["data"] and "url" not in first["small.csv"]
    assert first["large.bin"]["url"].startswith("https://s3.example/sandbox/o/r/in/")
    inline = [n for n, f in first.items() if "data" in f]
    assert sum(len(base64.b64decode(first[n]["data"])) for n in inline) <= run_files.INLINE_TOTAL_BYTES
    assert len(inline) < 7 and len(bucket) == 1 + 7 - len(inline)  # the rest went to the bucket, once each
    assert [f.get("url") for f in sent[1]["files"]] == [f.get("url") for f in sent[0]["files"]]  # not put again
    assert len(sent[0]["outputs"]) == SandboxLimits().max_files and sent[0]["addresses"] == {"s3.example": "192.0.2.1"}
    assert sent[0]["limits"]["files_bytes"] == SandboxLimits().files_bytes  # outputs no longer held to 6 MB


async def test_a_bucket_that_fails_is_the_calls_error_and_nothing_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    session, sent = _session(monkeypatch, [OK])
    session.prefix = "sandbox/o/r/"

    def unreachable(key: str, data: bytes) -> None:
        raise EndpointConnectionError(endpoint_url="https://s3.example")

    monkeypatch.setattr(run_files, "put", unreachable)
    failed = await session.call("1", (InFile("large.bin", b"l" * (run_files.INLINE_BYTES + 1)),))
    assert failed.error is not None and "could not be stored" in failed.error and sent == []
    assert session.alive and session.files == {}
