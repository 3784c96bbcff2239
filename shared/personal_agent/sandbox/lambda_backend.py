"""The AWS backend: every call invokes the stack's sandbox function (template.yaml `SandboxFunction`: no IAM beyond
its logs, a subnet with no route out), which runs the kernel in a fresh process and wipes `/tmp` before and after.

Lambda does not promise that a session's calls reach the same execution environment, so the session lives here,
in the platform: each call sends the session's earlier cells (and files), which the function replays with their
output dropped before it runs the new one. The platform reads the files and sends their bytes in the request; the
code never holds a URL or a credential. An execution environment serves one org: the function refuses an org other
than the first it served (`environment_pinned`), and the platform retries, landing on another environment.

Both ways a call travels in one synchronous invocation (6 MB each way): a request past it is refused here before
it is sent, and the files a call may bring back are capped so their base64 and the capped text fit the response.
A failed invocation (Lambda's error, the function's, no answer) is the call's error, which the model reads."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from typing import Any

from personal_agent.sandbox.config import SandboxLimits
from personal_agent.sandbox.interface import Availability, CallResult, InFile
from personal_agent.sandbox.kernel_process import result_of

MAX_REPLAYED_CELLS = 50
PINNED_RETRIES = 3
PAYLOAD_BYTES = 6_000_000
"""Lambda's limit on a synchronous invocation's request and on its response (6 MB each)."""
READ_SECONDS = 910.0
"""How long an invocation may take to answer: past Lambda's longest timeout, so the function's own ends it first."""


class InvokeFailed(RuntimeError):
    """The invocation did not bring back the function's answer (why, in words the model can read)."""


def files_budget(limits: SandboxLimits) -> int:
    """Bytes of files one call may bring back: their base64 (4/3) and the call's text, capped and JSON-escaped (up
    to 6 characters each, stdout + stderr + value + what child processes wrote), fit Lambda's response."""
    text = 4 * 6 * limits.output_chars + 2**16
    return max(0, min(limits.files_bytes, (PAYLOAD_BYTES - text) * 3 // 4))


def _function_error(body: Any) -> str:
    if isinstance(body, dict):
        return f"{body.get('errorType', 'error')}: {str(body.get('errorMessage', ''))[:200]}"
    return str(body)[:200]


class LambdaSession:
    def __init__(self, function_name: str, org_id: str, limits: SandboxLimits) -> None:
        self.function_name, self.org_id, self.limits = function_name, org_id, limits
        self.cells: list[str] = []
        self.files: dict[str, InFile] = {}
        """The session's input files by name (a file named again replaces the earlier one: sent once per call)."""
        self.ended: str | None = None

    @property
    def alive(self) -> bool:
        return self.ended is None

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

    def _request(self, code: str, files: tuple[InFile, ...]) -> bytes:
        session_files = {**self.files, **{f.name: f for f in files}}
        payload = {
            "org_id": self.org_id,
            "replay": self.cells[-MAX_REPLAYED_CELLS:],
            "code": code,
            "files": [{"name": f.name, "data": base64.b64encode(f.data).decode()} for f in session_files.values()],
            "limits": {**self.limits.kernel_args(""), "files_bytes": files_budget(self.limits)},
            "wall_seconds": self.limits.wall_seconds,
        }
        return json.dumps(payload).encode()

    async def call(self, code: str, files: tuple[InFile, ...] = ()) -> CallResult:
        if not self.alive:
            return CallResult(error=f"the sandbox session has ended ({self.ended})", ended="ended")
        request = self._request(code, files)
        if len(request) > PAYLOAD_BYTES:
            sent = sum(len(f.data) for f in {**self.files, **{f.name: f for f in files}}.values())
            return CallResult(
                error=f"this call would send {len(request) / 1e6:.1f} MB to the sandbox, which takes 6 MB per call "
                f"(the session's files, {sent / 1e6:.1f} MB, go with every call, and its earlier cells): "
                "use fewer or smaller files"
            )
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
        if result.error is None and result.ended is None:
            self.cells.append(code)
            self.files.update((f.name, f) for f in files)
        return result

    async def close(self) -> None:
        self.ended = "closed"


class LambdaBackend:
    def __init__(self, function_name: str, limits: SandboxLimits) -> None:
        self.function_name, self.limits = function_name, limits

    def availability(self) -> Availability:
        if not self.function_name:
            return Availability(False, "PA_SANDBOX_FUNCTION is not set: the stack has no sandbox function")
        return Availability(True, f"the sandbox function {self.function_name.rsplit(':', 1)[-1]}", backend="lambda")

    async def open(self, org_id: str) -> LambdaSession:
        return LambdaSession(self.function_name, org_id, self.limits)
