"""A run worker in a process of its own, for tests that kill it (SIGKILL) at a checkpoint boundary.

    python -m tests.crash_worker launch|recover '<json config>'

Both commands register the three-request scripted model and the `probe` tool, then drive here: `launch`
starts the run (inline, through the launch chokepoint); `recover` runs the recovery sweep, which hands the
runs whose worker is gone back to this process. With `block` set to "request:N" (after the model's first
chunk of request N) or "tool:N" (inside the probe call of round N), the worker prints `blocked <point>` there
and waits for a line on stdin, so the test kills it at an exact point, with no timing involved.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from uuid import UUID

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from personal_agent.models.catalog import register_model, unregister_model
from personal_agent.tools.registry import ToolDef, register_tool, unregister_tool

ROOT = Path(__file__).resolve().parents[1]
MODEL_ID = "test:three-requests"
TOOL = "probe"


def _blocked(point: str) -> None:
    print(f"blocked {point}", flush=True)
    sys.stdin.readline()  # the test kills this process here, or sends a line to let it go on


def register(block: str | None = None, calls: list[int] | None = None) -> None:
    """Offer the model (two tool rounds, then an answer: three model requests) and its tool in this process."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        index = sum(1 for m in messages if isinstance(m, ModelResponse))  # this request's index in the run
        if calls is not None:
            calls.append(index)
        yield f"Step {index}. "
        if block == f"request:{index}":
            await asyncio.to_thread(_blocked, block)
        if index < 2:
            yield {0: DeltaToolCall(name=TOOL, json_args=json.dumps({"round": index}), tool_call_id=f"probe_{index}")}
        else:
            yield "All done."

    def probe(round: int) -> str:
        """Probe something (a scripted tool)."""
        if block == f"tool:{round}":
            _blocked(block)
        return f"probed {round}"

    register_model(MODEL_ID, lambda: FunctionModel(stream_function=stream, model_name="scripted"))
    register_tool(ToolDef(TOOL, probe, "Probe something."))


def unregister() -> None:
    unregister_model(MODEL_ID)
    unregister_tool(TOOL)


async def _main(command: str, config: dict[str, Any]) -> None:
    from personal_agent.bus import reset_bus
    from personal_agent.db import close_pool
    from personal_agent.lifecycle.local_drives import wait_for_local_runs

    register(config.get("block"))
    if command == "launch":
        from personal_agent.lifecycle.launch import LaunchRequest, launch_run

        request = LaunchRequest(
            org_id=UUID(config["org_id"]),
            user_id=UUID(config["user_id"]),
            chat_id=UUID(config["chat_id"]),
            message="probe twice, then answer",
            model=MODEL_ID,
            mode="inline",
            tools=(TOOL,),
            run_id=UUID(config["run_id"]),
        )
        await launch_run(request)
    else:
        from personal_agent.lifecycle.recovery import recover_unattended

        await recover_unattended()
    await wait_for_local_runs()
    await close_pool()
    await reset_bus()
    print("finished", flush=True)


class WorkerProcess:
    """`python -m tests.crash_worker` with its output read line by line and its log in a file."""

    def __init__(self, command: str, config: dict[str, str], log: Path) -> None:
        self.log = log
        with log.open("a") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tests.crash_worker", command, json.dumps(config)],
                cwd=ROOT,
                env=dict(os.environ),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
            )

    def wait_blocked(self) -> str:
        """Where the worker stopped (it prints that, then waits for stdin)."""
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("blocked "):
                return line.removeprefix("blocked ").strip()
        raise AssertionError(f"the worker exited with {self.proc.wait()}:\n{self.log.read_text()[-4000:]}")

    def go_on(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()  # reaped: its process id no longer exists


if __name__ == "__main__":
    asyncio.run(_main(sys.argv[1], json.loads(sys.argv[2])))
