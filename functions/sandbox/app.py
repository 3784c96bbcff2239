"""The sandbox function (AWS backend of `run_python`): no IAM permission beyond its logs, in a subnet whose one way
out is an S3 gateway endpoint limited to the bucket's sandbox prefix. One invocation runs one call of a session: the
session's earlier cells are replayed (their output dropped), then the new cell runs, in a kernel process started
for this invocation and killed with everything it started before the function returns; `/tmp` is wiped before and
after. An execution environment serves the org of its first invocation only (`environment_pinned` for any other:
the platform retries on another environment).

Files: this wrapper, before any code runs, writes the session's input files into the scratch directory: the small
ones come base64 in the event, the large ones it fetches from the presigned GET URLs the platform made; after the
code ran, it uploads each output file larger than `inline_bytes` to one of the presigned PUT URLs the platform made
(`outputs`, one per slot) and answers with the slot instead of the bytes. The subnet has no DNS, so the platform
sends the address of each URL's host (`addresses`) and the wrapper connects there, naming the host in TLS and HTTP.
The code never sees a URL, and could not use one: the kernel refuses it every socket (below) before it reads code.

The subnet does not close the environment's own loopback, where Lambda's Runtime API listens (127.0.0.1:9001: it
hands out the next event, takes replies). So the kernel installs the local sandbox's seccomp filter (`seccomp.py`:
no socket but AF_UNIX; unprivileged, after no_new_privs) on itself before it reads any code, and refuses to run
code if the filter did not take. The call's wall-clock limit covers the replay and the new cell; past it the kernel
and everything it started are killed and the call is answered with an error (the session's earlier cells stay).

It imports nothing of the platform: the kernel and the filter (`personal_agent/sandbox/kernel.py`, `seccomp.py`)
are copied beside it at build, the scientific layer (numpy, pandas, matplotlib) is at /opt/python. Over 300 lines
because of that: its HTTP to the bucket (an address without DNS) cannot come from a module of the platform."""

from __future__ import annotations

import base64
import ctypes
import http.client
import importlib.util
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

KERNEL = str(Path(__file__).with_name("kernel.py"))
SECCOMP = Path(__file__).with_name("seccomp.py")
TMP = "/tmp"  # Lambda's only writable disk (tests point it, and LAYER, at directories of their own)
LAYER = "/opt/python"
PAYLOAD_BYTES = 6_000_000
"""Lambda's limit on a synchronous invocation's response (and request): a reply past it loses files to fit."""
MAX_INPUT_BYTES = 25 * 1024 * 1024
"""The largest input file fetched (the largest the platform puts in a sandbox)."""
MAX_INPUTS_BYTES = 256 * 1024 * 1024
"""All of a call's input files together (Lambda's /tmp holds 512 MB)."""
HTTP_TIMEOUT_SECONDS = 30.0
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
    for cell in event.get("replay", []):  # the session's files are in the scratch directory already
        if _exchange(kernel, {"code": cell, "files": []}) is None:
            return None
    return _exchange(kernel, {"code": event["code"], "files": []})


def _kill_group(kernel: subprocess.Popen[str]) -> None:
    try:
        os.killpg(kernel.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _Pinned(http.client.HTTPConnection):
    """HTTP to a host at the address the platform resolved (the subnet has no DNS)."""

    def __init__(self, host: str, port: int, address: str) -> None:
        super().__init__(host, port, timeout=HTTP_TIMEOUT_SECONDS)
        self.address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address, self.port), HTTP_TIMEOUT_SECONDS)


class _PinnedTLS(http.client.HTTPSConnection):
    """HTTPS to a host at the address the platform resolved; the certificate is checked against the host's name."""

    def __init__(self, host: str, port: int, address: str) -> None:
        self.tls = ssl.create_default_context()
        super().__init__(host, port, timeout=HTTP_TIMEOUT_SECONDS, context=self.tls)
        self.address = address

    def connect(self) -> None:
        sock = socket.create_connection((self.address, self.port), HTTP_TIMEOUT_SECONDS)
        self.sock = self.tls.wrap_socket(sock, server_hostname=self.host)


def _connection(url: str, addresses: dict[str, str]) -> tuple[http.client.HTTPConnection, str]:
    parts = urlsplit(url)
    host, tls = parts.hostname or "", parts.scheme == "https"
    port = parts.port or (443 if tls else 80)
    connection = (_PinnedTLS if tls else _Pinned)(host, port, addresses.get(host, host))
    return connection, parts.path + (f"?{parts.query}" if parts.query else "")


def _fetch(url: str, path: str, addresses: dict[str, str], cap: int) -> int:
    """Download a presigned GET into `path`, at most `cap` bytes; its size."""
    connection, target = _connection(url, addresses)
    try:
        connection.request("GET", target)
        response = connection.getresponse()
        if response.status != 200:
            raise OSError(f"the bucket answered {response.status}")
        size = 0
        with open(path, "wb") as fh:
            while chunk := response.read(2**20):
                size += len(chunk)
                if size > cap:
                    raise OSError("a file is larger than the sandbox takes")
                fh.write(chunk)
        return size
    finally:
        connection.close()


def _put(url: str, data: bytes, addresses: dict[str, str]) -> None:
    connection, target = _connection(url, addresses)
    try:
        connection.request("PUT", target, body=data)
        response = connection.getresponse()
        response.read()
        if response.status not in (200, 204):
            raise OSError(f"the bucket answered {response.status}")
    finally:
        connection.close()


def _write_inputs(event: dict[str, Any]) -> None:
    """The session's input files into the scratch directory, before the kernel starts: inline ones decoded, the
    others fetched from their presigned URLs (never more than `MAX_INPUTS_BYTES` together)."""
    scratch = os.path.join(TMP, "work")
    os.makedirs(scratch, exist_ok=True)
    left = MAX_INPUTS_BYTES
    for item in event.get("files", []):
        name = os.path.basename(str(item.get("name", "")))
        if name in ("", ".", ".."):
            continue
        path = os.path.join(scratch, name)
        if "url" in item:
            left -= _fetch(str(item["url"]), path, event.get("addresses", {}), min(left, MAX_INPUT_BYTES))
        else:
            data = base64.b64decode(item.get("data", ""))
            left -= len(data)
            if left < 0:
                raise OSError("the session's files are larger than the sandbox takes")
            Path(path).write_bytes(data)


def _upload_outputs(reply: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    """Each output file over `inline_bytes` uploaded to a slot the platform presigned, answered with the slot; one
    that finds no slot, or whose upload failed, is named in `files_left_out`."""
    slots, inline = list(event.get("outputs", [])), int(event.get("inline_bytes") or 0)
    files, left_out = [], list(reply.get("files_left_out", []))
    for item in reply.get("files", []):
        if not slots or len(item.get("data", "")) * 3 // 4 <= inline:
            files.append(item)
            continue
        data = base64.b64decode(item["data"])
        slot = len(event["outputs"]) - len(slots)
        try:
            _put(slots.pop(0), data, event.get("addresses", {}))
        except (OSError, http.client.HTTPException):
            left_out.append(item["name"])
            continue
        files.append({"name": item["name"], "slot": slot, "size": len(data)})
    return {**reply, "files": files, "files_left_out": left_out}


def _run(event: dict[str, Any], context: Any) -> dict[str, Any]:
    try:
        _write_inputs(event)
    except (OSError, ValueError, http.client.HTTPException) as exc:
        return {"error": f"the sandbox could not fetch the session's files: {exc}", "files": []}
    seconds = _seconds(event, context)
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
    files = sorted(reply.get("files", []), key=lambda f: len(f.get("data", "")))  # a slot's entry is a few bytes
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
        return _fit(_upload_outputs(_run(event, context), event))
    finally:
        _kill_strays()
        _wipe_tmp()
