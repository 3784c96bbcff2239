"""The AWS backend: every call invokes the stack's sandbox function (template.yaml `SandboxFunction`: no IAM beyond
its logs, a subnet with no route out), which runs the kernel in a fresh process and wipes `/tmp` before and after.

Lambda does not promise that a session's calls reach the same execution environment, so the session lives here,
in the platform: each call sends the session's earlier cells (and files), which the function replays with their
output dropped before it runs the new one. The platform reads the files and sends their bytes in the request; the
code never holds a URL or a credential. An execution environment serves one org: the function refuses an org other
than the first it served (`environment_pinned`), and the platform retries, landing on another environment."""

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


class LambdaSession:
    def __init__(self, function_name: str, org_id: str, limits: SandboxLimits) -> None:
        self.function_name, self.org_id, self.limits = function_name, org_id, limits
        self.cells: list[str] = []
        self.files: list[InFile] = []
        self.ended: str | None = None

    @property
    def alive(self) -> bool:
        return self.ended is None

    def _invoke(self, payload: dict[str, Any]) -> dict[str, Any]:
        from personal_agent.aws_clients import aws_client

        response = aws_client("lambda").invoke(FunctionName=self.function_name, Payload=json.dumps(payload).encode())
        body = json.loads(response["Payload"].read() or b"{}")
        if response.get("FunctionError") or not isinstance(body, dict):
            raise RuntimeError(f"the sandbox function failed: {str(body)[:200]}")
        return body

    async def call(self, code: str, files: tuple[InFile, ...] = ()) -> CallResult:
        if not self.alive:
            return CallResult(error=f"the sandbox session has ended ({self.ended})", ended="ended")
        payload = {
            "org_id": self.org_id,
            "replay": self.cells[-MAX_REPLAYED_CELLS:],
            "code": code,
            "files": [{"name": f.name, "data": base64.b64encode(f.data).decode()} for f in (*self.files, *files)],
            "limits": self.limits.kernel_args(""),
            "wall_seconds": self.limits.wall_seconds,
        }
        started = time.monotonic()
        for _ in range(PINNED_RETRIES):
            body = await asyncio.to_thread(self._invoke, payload)
            if body.get("error_code") != "environment_pinned":
                break
        seconds = time.monotonic() - started
        if body.get("error_code"):
            self.ended = str(body.get("error_code"))
            return CallResult(error=f"the sandbox refused the call: {body.get('error_code')}", seconds=seconds)
        result = result_of(body, seconds)
        if result.error is None and result.ended is None:
            self.cells.append(code)
            self.files.extend(files)
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
