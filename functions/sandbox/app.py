"""The sandbox function (AWS backend of `run_python`): no IAM permission beyond its logs, in a subnet with no route
out. One invocation runs one call of a session: the session's earlier cells are replayed (their output dropped),
then the new cell runs, in a kernel process started for this invocation and killed with everything it started
before the function returns; `/tmp` is wiped before and after. An execution environment serves the org of its
first invocation only (`environment_pinned` for any other: the platform retries on another environment).

The subnet does not close the environment's own loopback, where Lambda's Runtime API listens (127.0.0.1:9001: it
hands out the next event, takes replies). So the kernel installs the local sandbox's seccomp filter on itself
(`seccomp.py`: no socket but AF_UNIX; unprivileged, after no_new_privs) before it reads any code, and refuses to run
code if the filter did not take. The call's wall-clock limit covers the replay and the new cell; past it the kernel
and everything it started are killed and the call is answered with an error (the session's earlier cells stay).

It imports nothing of the platform: the kernel and the filter (`personal_agent/sandbox/kernel.py`, `seccomp.py`)
are copied beside it at build, the scientific layer (numpy, pandas, matplotlib) is at /opt/python."""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

KERNEL = str(Path(__file__).with_name("kernel.py"))
SECCOMP = Path(__file__).with_name("seccomp.py")
TMP = "/tmp"  # Lambda's only writable disk (tests point it, and LAYER, at directories of their own)
LAYER = "/opt/python"
PAYLOAD_BYTES = 6_000_000
"""Lambda's limit on a synchronous invocation's response (and request): a reply past it loses files to fit."""
MARGIN_SECONDS = 3.0
"""Of the invocation's time, kept to kill, wipe and answer after a call that ran to its limit."""
_pinned: dict[str, str] = {}


def _wipe_tmp() -> None:
    for entry in Path(TMP).iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def _kill_strays() -> None:
    """Kill every process of the environment but this one and its ancestors (the runtime): what the code left;
    wait (at most 2 s) until they are gone."""
    keep, pid = {os.getpid()}, os.getpid()
    while pid > 1:
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        keep.add(pid)
    killed = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in keep:
            try:
                os.kill(int(name), signal.SIGKILL)
                killed.append(name)
            except (ProcessLookupError, PermissionError):
                pass
    deadline = time.monotonic() + 2
    while killed and time.monotonic() < deadline:
        killed = [p for p in killed if os.path.exists(f"/proc/{p}")]
        time.sleep(0.002)


def _socket_filter() -> str:
    """The local sandbox's seccomp program (the `seccomp.py` beside this file), hex, for the kernel's argv."""
    spec = importlib.util.spec_from_file_location("pa_sandbox_seccomp", SECCOMP)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not module.supported():
        raise RuntimeError("no socket filter for this machine's architecture: code is not run")
    program: bytes = module.socket_filter()
    return program.hex()


def _start_kernel(limits: dict[str, Any]) -> subprocess.Popen[str]:
    scratch = os.path.join(TMP, "work")
    os.makedirs(scratch)
    kernel_args = {**limits, "site_packages": LAYER, "reap": 0, "seccomp": _socket_filter()}
    env = {"HOME": scratch, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "MPLBACKEND": "Agg", "TMPDIR": TMP}
    env |= {"MPLCONFIGDIR": f"{TMP}/matplotlib", "OPENBLAS_NUM_THREADS": "1", "PA_SANDBOX_SCRATCH": scratch}
    env |= {"PA_SANDBOX_TMP": TMP}
    return subprocess.Popen(
        [sys.executable, "-I", "-S", KERNEL, json.dumps(kernel_args)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=scratch,
        text=True,
        start_new_session=True,
    )


def _exchange(kernel: subprocess.Popen[str], request: dict[str, Any]) -> dict[str, Any] | None:
    """Send one cell, read its reply (None: the kernel is gone, killed at the limit or by one of its own)."""
    assert kernel.stdin is not None and kernel.stdout is not None
    try:
        kernel.stdin.write(json.dumps(request) + "\n")
        kernel.stdin.flush()
    except (BrokenPipeError, OSError):
        return None
    line = kernel.stdout.readline()
    if not line:
        return None
    reply: dict[str, Any] = json.loads(line)
    return reply


def _cells(kernel: subprocess.Popen[str], event: dict[str, Any]) -> dict[str, Any] | None:
    """The earlier cells replayed (their output dropped), then the new one: its reply."""
    assert kernel.stdout is not None
    if not kernel.stdout.readline():  # "ready", or the kernel refused to start (no filter: no code)
        return None
    files = event.get("files", [])
    for cell in event.get("replay", []):
        if _exchange(kernel, {"code": cell, "files": files}) is None:
            return None
        files = []
    return _exchange(kernel, {"code": event["code"], "files": files})


def _kill_group(kernel: subprocess.Popen[str]) -> None:
    try:
        os.killpg(kernel.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _run(event: dict[str, Any], seconds: float) -> dict[str, Any]:
    kernel = _start_kernel(event["limits"])
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        _kill_group(kernel)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()
    try:
        reply = _cells(kernel, event)
    finally:
        timer.cancel()
        _kill_group(kernel)
        kernel.wait()
    if reply is not None:
        return reply
    if expired.is_set():
        error = f"the call ran past its {seconds:g} s wall-clock limit (replaying the session's earlier cells included)"
        return {"error": error + " and was stopped; the session's earlier cells are kept", "files": []}
    return {"error": f"the sandbox's kernel exited during the call (exit status {kernel.returncode})", "files": []}


def _seconds(event: dict[str, Any], context: Any) -> float:
    """The call's wall-clock limit: the session's, within what is left of the invocation (the reply must get out)."""
    wall = float(event.get("wall_seconds") or 30)
    if context is not None:
        wall = min(wall, context.get_remaining_time_in_millis() / 1000 - MARGIN_SECONDS)
    return max(wall, 1.0)


def _fit(reply: dict[str, Any]) -> dict[str, Any]:
    """The reply within Lambda's response limit: the largest files left out (named in `files_left_out`) until it is."""
    files = sorted(reply.get("files", []), key=lambda f: len(f.get("data", "")))
    left_out = list(reply.get("files_left_out", []))
    while files and len(json.dumps({**reply, "files": files, "files_left_out": left_out})) > PAYLOAD_BYTES:
        left_out.append(files.pop()["name"])
    return {**reply, "files": files, "files_left_out": left_out}


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
        return _fit(_run(event, _seconds(event, context)))
    finally:
        _kill_strays()
        _wipe_tmp()
