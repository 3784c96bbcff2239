"""The AWS backend: every call invokes the stack's sandbox function (template.yaml `SandboxFunction`: no IAM beyond
its logs, a subnet whose one way out is the bucket's sandbox prefix through an S3 gateway endpoint), which runs the
kernel in a fresh process and wipes `/tmp` before and after.

Lambda does not promise that a session's calls reach the same execution environment, so the session lives here,
in the platform: each call sends the session's earlier cells (and files), which the function replays with their
output dropped before it runs the new one. An execution environment serves one org: the function refuses an org
other than the first it served (`environment_pinned`), and the platform retries, landing on another environment.

Files: a small one (`run_files.INLINE_BYTES`, while the call's inline files stay under `INLINE_TOTAL_BYTES`)
travels base64 inside the invocation; a larger one the platform puts in the run's sandbox prefix once and sends a
presigned GET of it with every call, and for what the code writes it sends presigned PUTs of `max_files` output
slots: the function's own wrapper fetches before the code runs and uploads after it, and the platform reads the
slots back. The code never holds a URL or a credential. Without the bucket (`PA_DOCUMENTS_BUCKET` unset) every file
travels inline and a request past Lambda's 6 MB is refused here before it is sent. A failed invocation (Lambda's
error, the function's, no answer) is the call's error, which the model reads."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import logging
import time
import uuid
from typing import Any

from personal_agent.sandbox import run_files
from personal_agent.sandbox.config import SandboxLimits
from personal_agent.sandbox.interface import Availability, CallResult, InFile, OutFile
from personal_agent.sandbox.kernel_process import result_of

log = logging.getLogger("personal_agent.sandbox")

MAX_REPLAYED_CELLS = 50
PINNED_RETRIES = 3
PAYLOAD_BYTES = 6_000_000
"""Lambda's limit on a synchronous invocation's request and on its response (6 MB each)."""
READ_SECONDS = 910.0
"""How long an invocation may take to answer: past Lambda's longest timeout, so the function's own ends it first."""


class InvokeFailed(RuntimeError):
    """The invocation did not bring back the function's answer (why, in words the model can read)."""


def files_budget(limits: SandboxLimits, through_bucket: bool = False) -> int:
    """Bytes of files one call may bring back. Through the bucket, the session's limit (the function keeps in its
    reply only files up to the inline size); else their base64 (4/3) and the call's text, capped and JSON-escaped
    (up to 6 characters each, stdout + stderr + value + what child processes wrote), fit Lambda's response."""
    if through_bucket:
        return limits.files_bytes
    text = 4 * 6 * limits.output_chars + 2**16
    return max(0, min(limits.files_bytes, (PAYLOAD_BYTES - text) * 3 // 4))


def _function_error(body: Any) -> str:
    if isinstance(body, dict):
        return f"{body.get('errorType', 'error')}: {str(body.get('errorMessage', ''))[:200]}"
    return str(body)[:200]


class LambdaSession:
    def __init__(self, function_name: str, org_id: str, limits: SandboxLimits, prefix: str = "") -> None:
        self.function_name, self.org_id, self.limits, self.prefix = function_name, org_id, limits, prefix
        self.cells: list[str] = []
        self.files: dict[str, InFile] = {}
        """The session's input files by name (a file named again replaces the earlier one: sent once per call)."""
        self.ended: str | None = None

    @property
    def alive(self) -> bool:
        return self.ended is None

    def restore(self, cells: list[str], files: tuple[InFile, ...]) -> None:
        """Take a durable run's record: its cells are replayed by the function with the next call, as always."""
        self.cells, self.files = list(cells), {f.name: f for f in files}

    def _invoke(self, request: bytes) -> dict[str, Any]:
        """One synchronous invocation, never retried (a retry would run the code again): the function's reply."""
        from botocore.exceptions import BotoCoreError, ClientError

        from personal_agent.aws_clients import aws_client

        client = aws_client("lambda", read_timeout=READ_SECONDS, connect_timeout=10, retries={"total_max_attempts": 1})
        try:
            response = client.invoke(FunctionName=self.function_name, Payload=request)
            body = json.loads(response["Payload"].read() or b"{}")
        except ClientError as exc:
            error = exc.response.get("Error", {})
            raise InvokeFailed(f"Lambda refused the invocation: {error.get('Code')}: {error.get('Message')}") from exc
        except (BotoCoreError, ValueError) as exc:
            raise InvokeFailed(f"the sandbox function did not answer: {type(exc).__name__}") from exc
        if response.get("FunctionError") or not isinstance(body, dict):
            raise InvokeFailed(f"the sandbox function failed: {_function_error(body)}")
        return body

    def _placed(self, files: tuple[InFile, ...]) -> list[tuple[InFile, bool]]:
        """The session's files with this call's, each with whether it travels inline (up to the inline sizes, or
        every file without the bucket); one that does not and is not in the bucket yet is put there now (blocking:
        run it in a thread)."""
        placed, inline_total = [], 0
        for file in {**self.files, **{f.name: f for f in files}}.values():
            size, has_data = len(file.data), bool(file.data) or not file.key
            fits = size <= run_files.INLINE_BYTES and inline_total + size <= run_files.INLINE_TOTAL_BYTES
            inline = not self.prefix or (has_data and fits)
            if not inline and not file.key:
                file = InFile(file.name, file.data, run_files.input_key(self.prefix, file.name))
                run_files.put(file.key, file.data)
            inline_total += size if inline else 0
            placed.append((file, inline))
        return placed

    def _request(self, code: str, placed: list[tuple[InFile, bool]], call: str) -> bytes:
        """The invocation's payload (blocking when it presigns: run it in a thread)."""
        sent = [
            {"name": f.name, "data": base64.b64encode(f.data).decode()}
            if inline
            else {"name": f.name, "url": run_files.presigned_get(f.key)}
            for f, inline in placed
        ]
        outputs = [
            run_files.presigned_put(run_files.output_key(self.prefix, call, slot), self.limits.wall_seconds)
            for slot in range(self.limits.max_files if self.prefix else 0)
        ]
        payload = {
            "org_id": self.org_id,
            "replay": self.cells[-MAX_REPLAYED_CELLS:],
            "code": code,
            "files": sent,
            "outputs": outputs,
            "inline_bytes": run_files.INLINE_BYTES,
            "addresses": run_files.addresses([*outputs, *(f["url"] for f in sent if "url" in f)]),
            "limits": {**self.limits.kernel_args(""), "files_bytes": files_budget(self.limits, bool(self.prefix))},
            "wall_seconds": self.limits.wall_seconds,
        }
        return json.dumps(payload).encode()

    def _outputs(self, body: dict[str, Any], call: str) -> tuple[OutFile, ...]:
        """The files the function uploaded to the call's output slots (blocking: run in a thread)."""
        found = []
        for item in body.get("files", []):
            if isinstance(item, dict) and isinstance(item.get("slot"), int) and "data" not in item:
                key = run_files.output_key(self.prefix, call, item["slot"])
                data = run_files.take(key, self.limits.files_bytes) if self.prefix else None
                if data is not None:
                    found.append(OutFile(str(item.get("name")), data))
        return tuple(found)

    def _too_large(self, request: bytes, placed: list[tuple[InFile, bool]]) -> CallResult:
        sent = sum(len(f.data) for f, inline in placed if inline)
        return CallResult(
            error=f"this call would send {len(request) / 1e6:.1f} MB to the sandbox, which takes 6 MB per call "
            f"(the session's files, {sent / 1e6:.1f} MB, go with every call, and its earlier cells): "
            "use fewer or smaller files"
        )

    async def call(self, code: str, files: tuple[InFile, ...] = ()) -> CallResult:
        if not self.alive:
            return CallResult(error=f"the sandbox session has ended ({self.ended})", ended="ended")
        call = uuid.uuid4().hex
        try:
            placed = await asyncio.to_thread(self._placed, files)
            request = await asyncio.to_thread(self._request, code, placed, call)
        except Exception as exc:  # the bucket or its address (S3's error, no answer): nothing was run
            return CallResult(error=f"the session's files could not be stored for the sandbox: {type(exc).__name__}")
        if len(request) > PAYLOAD_BYTES:
            return self._too_large(request, placed)
        started = time.monotonic()
        try:
            for _ in range(PINNED_RETRIES):
                body = await asyncio.to_thread(self._invoke, request)
                if body.get("error_code") != "environment_pinned":
                    break
        except InvokeFailed as exc:
            return CallResult(error=f"{exc} (this cell is not kept)", seconds=time.monotonic() - started)
        seconds = time.monotonic() - started
        if body.get("error_code"):
            self.ended = str(body.get("error_code"))
            return CallResult(error=f"the sandbox refused the call: {body.get('error_code')}", seconds=seconds)
        result = result_of(body, seconds)
        try:
            uploaded = await asyncio.to_thread(self._outputs, body, call)
        except Exception as exc:  # the code ran: its result stands, its uploaded files are named as left out
            log.warning("the sandbox's output files could not be read", extra={"error": type(exc).__name__})
            uploaded = ()
            names = tuple(str(f.get("name")) for f in body.get("files", []) if isinstance(f, dict) and "slot" in f)
            result = dataclasses.replace(result, files_left_out=result.files_left_out + names)
        if uploaded:
            result = dataclasses.replace(result, files=result.files + uploaded)
        if result.error is None and result.ended is None:
            self.cells.append(code)
            self.files = {f.name: f for f, _ in placed}
        return result

    async def close(self) -> None:
        self.ended = "closed"


class LambdaBackend:
    files_in_bucket = True
    """Its sessions put large files in the run's sandbox prefix (the run's end deletes it)."""

    def __init__(self, function_name: str, limits: SandboxLimits) -> None:
        self.function_name, self.limits = function_name, limits

    def availability(self) -> Availability:
        if not self.function_name:
            return Availability(False, "PA_SANDBOX_FUNCTION is not set: the stack has no sandbox function")
        return Availability(True, f"the sandbox function {self.function_name.rsplit(':', 1)[-1]}", backend="lambda")

    async def open(self, org_id: str, prefix: str = "") -> LambdaSession:
        """A session kept here; `prefix`: where its large files go in the bucket ("": every file inline)."""
        return LambdaSession(self.function_name, org_id, self.limits, prefix)
