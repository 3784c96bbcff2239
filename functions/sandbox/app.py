"""The sandbox function (AWS backend of `run_python`): no IAM permission beyond its logs, in a subnet with no route
out. One invocation runs one call of a session: the session's earlier cells are replayed (their output dropped),
then the new cell runs, in a kernel process started for this invocation and killed with everything it started
before the function returns; `/tmp` is wiped before and after. An execution environment serves the org of its
first invocation only (`environment_pinned` for any other: the platform retries on another environment).

It imports nothing of the platform: the kernel (`personal_agent/sandbox/kernel.py`) is copied beside it at build,
the scientific layer (numpy, pandas, matplotlib) is at /opt/python."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

KERNEL = str(Path(__file__).with_name("kernel.py"))
SCRATCH = "/tmp/work"
LAYER = "/opt/python"
_pinned: dict[str, str] = {}


def _wipe_tmp() -> None:
    for entry in Path("/tmp").iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def _kill_strays() -> None:
    """Every process of the environment but this one and its ancestors (the runtime): what the code left."""
    keep, pid = {os.getpid()}, os.getpid()
    while pid > 1:
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        keep.add(pid)
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in keep:
            try:
                os.kill(int(name), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _exchange(kernel: subprocess.Popen[str], request: dict[str, Any]) -> dict[str, Any]:
    assert kernel.stdin is not None and kernel.stdout is not None
    kernel.stdin.write(json.dumps(request) + "\n")
    kernel.stdin.flush()
    line = kernel.stdout.readline()
    if not line:
        return {"error": "the sandbox exited", "ended": "the sandbox exited"}
    reply: dict[str, Any] = json.loads(line)
    return reply


def _run(event: dict[str, Any]) -> dict[str, Any]:
    limits = {**event["limits"], "site_packages": LAYER, "reap": 0}
    env = {"HOME": SCRATCH, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "MPLBACKEND": "Agg"}
    env |= {"MPLCONFIGDIR": "/tmp/matplotlib", "OPENBLAS_NUM_THREADS": "1", "PA_SANDBOX_SCRATCH": SCRATCH}
    os.makedirs(SCRATCH)
    kernel = subprocess.Popen(
        [sys.executable, "-I", "-S", KERNEL, json.dumps(limits)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=SCRATCH,
        text=True,
        start_new_session=True,
    )
    try:
        assert kernel.stdout is not None
        kernel.stdout.readline()  # ready
        files = event.get("files", [])
        for cell in event.get("replay", []):
            _exchange(kernel, {"code": cell, "files": files})
            files = []
        reply = _exchange(kernel, {"code": event["code"], "files": files})
    finally:
        kernel.kill()
        kernel.wait()
    return reply


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """One call of a session (see the module's docstring)."""
    org = str(event.get("org_id", ""))
    if _pinned.setdefault("org", org) != org:
        return {"error_code": "environment_pinned"}
    if not os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):  # it wipes /tmp and kills processes: only inside Lambda
        return {"error_code": "not_in_lambda"}
    # Not dumpable: the code's processes (the same uid here) cannot read this one's /proc/<pid>/environ or memory.
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    _wipe_tmp()
    try:
        return _run(event)
    finally:
        _kill_strays()
        _wipe_tmp()
