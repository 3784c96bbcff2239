"""The Python kernel that runs INSIDE the sandbox: one process per session, keeping the session's variables between
calls. It imports nothing of the platform (it is started by path, with only the scientific site-packages on its
path) and speaks JSON lines: a request on stdin, a response on the descriptor that was stdout when it started
(stdout and stderr themselves are redirected, so code that writes to them cannot corrupt the protocol).

Before it reads any code it lowers its own limits (memory, CPU seconds, file size, processes, open files; hard
limits too, so the code cannot raise them back) and ignores SIGXFSZ, so a file past the size limit is an error
the code sees rather than a dead session; on Lambda (no network namespace) it also installs the socket filter it is
given. After every call it kills every other process of its PID namespace: no process outlives the call that
started it.
"""

from __future__ import annotations

import ast
import base64
import ctypes
import io
import json
import os
import resource
import signal
import socket
import sys
import time
import traceback
from typing import Any

SCRATCH = os.environ.get("PA_SANDBOX_SCRATCH", "/work")  # /tmp/work on Lambda, whose only writable disk is /tmp
FD_OUTPUT = os.path.join(os.environ.get("PA_SANDBOX_TMP", "/tmp"), ".fd-output")  # child processes' stdout/stderr
KERNEL_PID = os.getpid()
SINK: list[Any] = []  # the text stream over the redirected stdout/stderr, between calls


class Capped(io.TextIOBase):
    """A text stream that keeps its first `cap` characters and counts the rest."""

    def __init__(self, cap: int) -> None:
        self.cap, self.kept, self.dropped = cap, 0, 0
        self.parts: list[str] = []

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        room = self.cap - self.kept
        if room > 0:
            self.parts.append(s[:room])
            self.kept += min(room, len(s))
        self.dropped += max(0, len(s) - max(room, 0))
        return len(s)

    def text(self) -> str:
        out = "".join(self.parts)
        return out + (f"\n[… {self.dropped} more characters cut off]" if self.dropped else "")


def become(uid: int | None) -> None:
    """Started as root in its namespaces (a root platform): become a one-off unprivileged uid, no groups, no
    capabilities left (setuid away from 0 clears them), before any code is read."""
    if uid is None:
        return
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise SystemExit("could not drop privileges")


def lower_limits(limits: dict[str, int]) -> None:
    for name, value in (
        ("RLIMIT_AS", limits["memory_bytes"]),
        ("RLIMIT_FSIZE", limits["file_bytes"]),
        ("RLIMIT_NPROC", limits["processes"]),
        ("RLIMIT_NOFILE", 256),
        ("RLIMIT_CORE", 0),
    ):
        resource.setrlimit(getattr(resource, name), (value, value))
    cpu = limits["cpu_seconds"]
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def refuse_sockets(program_hex: str) -> None:
    """Install the socket filter (`sandbox/seccomp.py`'s program, hex; the Lambda function passes it: there is no
    network namespace there) on this process and all it will start: no_new_privs first, so no privilege is needed.
    A filter that did not take stops the kernel: code never runs with the network open."""
    if not program_hex:
        return
    program = bytes.fromhex(program_hex)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    # PR_SET_NO_NEW_PRIVS = 38; PR_SET_SECCOMP = 22 with SECCOMP_MODE_FILTER = 2
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.addressof(fprog), 0, 0) != 0:
        raise SystemExit(f"could not install the socket filter (errno {ctypes.get_errno()})")
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
    except PermissionError:
        return
    raise SystemExit("the socket filter did not take")


def reap_others() -> int:
    """SIGKILL every process of the namespace but its init (1) and this one, until none is left (one may fork while
    the first pass runs); how many there were. Its own children are waited for, so none stays a zombie."""
    me, killed = os.getpid(), 0
    for _ in range(100):
        others = [int(n) for n in os.listdir("/proc") if n.isdigit() and int(n) not in (1, me)]
        if not others:
            break
        for pid in others:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                pass
        for pid in others:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:  # not its child: the namespace's init reaps it, at once
                gone_from_proc(pid)
    return killed


def gone_from_proc(pid: int) -> None:
    """Wait (at most 2 s) until the namespace's init has reaped a killed process that was not this one's child."""
    for _ in range(2000):
        if not os.path.exists(f"/proc/{pid}"):
            return
        time.sleep(0.001)


def snapshot() -> dict[str, tuple[int, int]]:
    """Every regular file under the scratch directory (symlinks not followed): (size, mtime_ns) by path."""
    found: dict[str, tuple[int, int]] = {}
    stack = [SCRATCH]
    while stack:
        for entry in os.scandir(stack.pop()):
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            elif entry.is_file(follow_symlinks=False):
                st = entry.stat(follow_symlinks=False)
                found[os.path.relpath(entry.path, SCRATCH)] = (st.st_size, st.st_mtime_ns)
    return found


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".pdf")


def save_open_figures(before: dict[str, tuple[int, int]]) -> None:
    """Figures left open (`plt.plot(...)` without `savefig`) are saved as PNGs, as a notebook shows them; not when
    the call saved an image itself (its `savefig` leaves the figure open: it would come back twice)."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    wrote = [p for p, meta in snapshot().items() if before.get(p) != meta and p.lower().endswith(IMAGE_SUFFIXES)]
    if not wrote:
        for number in pyplot.get_fignums():
            pyplot.figure(number).savefig(os.path.join(SCRATCH, f"figure_{number}.png"), dpi=100)
    pyplot.close("all")


def run_cell(code: str, namespace: dict[str, Any]) -> str | None:
    """Execute the cell; the repr of its last expression (None when it is not an expression or is None)."""
    tree = ast.parse(code, "<cell>", "exec")
    last = tree.body[-1] if tree.body else None
    if not isinstance(last, ast.Expr):
        exec(compile(tree, "<cell>", "exec"), namespace)
        return None
    tree.body.pop()
    exec(compile(tree, "<cell>", "exec"), namespace)
    value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)
    return None if value is None else repr(value)


def cell_traceback(exc: BaseException) -> str:
    """The traceback from the cell down (the kernel's own frames left out)."""
    trace = traceback.TracebackException.from_exception(exc)
    trace.stack = traceback.StackSummary.from_list([f for f in trace.stack if f.filename != __file__])
    return "".join(trace.format())


def collect(before: dict[str, tuple[int, int]], limits: dict[str, int]) -> tuple[list[dict[str, Any]], list[str]]:
    """The files the call wrote (new or changed), within the count and size caps; the names of those left out."""
    files: list[dict[str, Any]] = []
    left_out: list[str] = []
    total = 0
    for path, meta in sorted(snapshot().items()):
        if before.get(path) == meta:
            continue
        size = meta[0]
        if len(files) >= limits["max_files"] or total + size > limits["files_bytes"]:
            left_out.append(path)
            continue
        with open(os.path.join(SCRATCH, path), "rb") as fh:
            files.append({"name": path, "data": base64.b64encode(fh.read()).decode()})
        total += size
    return files, left_out


def fd_output(cap: int) -> str:
    """What child processes wrote to the inherited stdout/stderr during the call (capped), then forgotten."""
    with open(FD_OUTPUT, "rb+") as fh:
        data = fh.read(cap + 1)
        fh.truncate(0)
    os.lseek(1, 0, os.SEEK_SET)
    text = data[:cap].decode("utf-8", "replace")
    return text + ("\n[… cut off]" if len(data) > cap else "")


def execute(request: dict[str, Any], namespace: dict[str, Any], limits: dict[str, int]) -> dict[str, Any]:
    for item in request.get("files", []):
        with open(os.path.join(SCRATCH, item["name"]), "wb") as fh:
            fh.write(base64.b64decode(item["data"]))
    before = snapshot()
    out, err = Capped(limits["output_chars"]), Capped(limits["output_chars"])
    sys.stdout, sys.stderr = out, err
    value, error = None, None
    try:
        value = run_cell(request["code"], namespace)
        save_open_figures(before)
    except BaseException as exc:  # the code's own failure (SystemExit included) is its result
        if os.getpid() != KERNEL_PID:
            os._exit(1)
        if isinstance(exc, MemoryError):
            error = "MemoryError: the session's memory limit was reached"
        else:
            error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            err.write(cell_traceback(exc))
    finally:
        if os.getpid() != KERNEL_PID:  # a process the code forked finished the cell: it never answers
            os._exit(0)
        sys.stdout = sys.stderr = SINK[0]
    reaped = reap_others() if limits.get("reap", 1) else 0  # on Lambda the function kills what the code left
    stray = fd_output(limits["output_chars"])
    files, left_out = collect(before, limits)
    return {
        "stdout": out.text() + stray,
        "stderr": err.text(),
        "value": value[: limits["output_chars"]] if value is not None else None,
        "error": error,
        "files": files,
        "files_left_out": left_out,
        "processes_killed": reaped,
    }


def main() -> None:
    limits = json.loads(sys.argv[1])
    sys.path.append(limits.pop("site_packages"))
    become(limits.pop("uid", None))
    lower_limits(limits)
    refuse_sockets(limits.pop("seccomp", ""))
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    sink = os.open(FD_OUTPUT, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(sink, 1)
    os.dup2(sink, 2)
    SINK.append(open(sink, "w", closefd=False))  # noqa: SIM115
    sys.stdout = sys.stderr = SINK[0]
    namespace: dict[str, Any] = {"__name__": "__main__"}
    replies.write(json.dumps({"ready": True}) + "\n")
    replies.flush()
    for line in requests:
        try:
            response = execute(json.loads(line), namespace, limits)
        except BaseException as exc:  # the kernel's own failure: reported, the session goes on
            response = {"stdout": "", "stderr": "", "value": None, "error": f"sandbox: {type(exc).__name__}: {exc}"}
            response.update(files=[], files_left_out=[], processes_killed=0)
        replies.write(json.dumps(response) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
