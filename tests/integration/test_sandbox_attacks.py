"""The local sandbox (`sandbox/bubblewrap.py`), attacked the way code a model writes (or a prompt injection makes it
write) would: each attack is refused or cut off, and the platform goes on unaffected (a fresh session still runs
code, this process's secrets and files stay out of reach)."""

from __future__ import annotations

import ast
import os
import socket
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from personal_agent.sandbox.bubblewrap import BubblewrapBackend, probe
from personal_agent.sandbox.config import SandboxLimits
from personal_agent.sandbox.interface import CallResult
from personal_agent.sandbox.kernel_process import KernelProcess

ROOT = Path(__file__).resolve().parents[2]
SECRET = "pa-sandbox-test-secret-4f1c"
LIMITS = SandboxLimits(wall_seconds=20, cpu_seconds=60, memory_bytes=1024 * 2**20, file_bytes=16 * 2**20)


@pytest.fixture(autouse=True)
def _platform_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PA_SANDBOX_TEST_SECRET", SECRET)  # what the platform's environment holds


@pytest.fixture
async def kernel() -> AsyncIterator[KernelProcess]:
    assert probe().ok, probe().detail  # the machine's isolation: `make sandbox` installs bubblewrap
    umask = os.umask(0o077)  # as `pa dev` runs: what bwrap creates must still be traversable by the sandbox's user
    try:
        session = await BubblewrapBackend(LIMITS).open("org-a")
    finally:
        os.umask(umask)
    yield session
    await session.close()


async def _platform_still_runs_code() -> None:
    fresh = await BubblewrapBackend(LIMITS).open("org-check")
    try:
        assert (await fresh.call("6 * 7")).value == "42"
    finally:
        await fresh.close()


def _value(result: CallResult) -> object:
    assert result.error is None, (result.error, result.stderr)
    assert result.value is not None
    return ast.literal_eval(result.value)


class _Listener:
    """A TCP server on the host's loopback that records every connection (the platform's Postgres, Redis...)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.sock.settimeout(0.2)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


async def test_no_socket_to_loopback_or_outside_and_no_dns(kernel: KernelProcess) -> None:
    listener = _Listener()
    try:
        code = f"""
import socket
outcomes = {{}}
for name, family, kind, address in [
    ("tcp_loopback", socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", {listener.port})),
    ("tcp_outside", socket.AF_INET, socket.SOCK_STREAM, ("1.1.1.1", 443)),
    ("udp_outside", socket.AF_INET, socket.SOCK_DGRAM, ("8.8.8.8", 53)),
    ("tcp6_loopback", socket.AF_INET6, socket.SOCK_STREAM, ("::1", {listener.port})),
]:
    try:
        s = socket.socket(family, kind)
        s.settimeout(2)
        s.connect(address)
        s.send(b"x")
        outcomes[name] = "connected"
    except OSError as exc:
        outcomes[name] = type(exc).__name__
try:
    socket.getaddrinfo("example.com", 443)
    outcomes["dns"] = "resolved"
except OSError as exc:
    outcomes["dns"] = type(exc).__name__
import ctypes
ring = ctypes.CDLL(None, use_errno=True).syscall(425, 8, ctypes.create_string_buffer(120))  # io_uring_setup
outcomes["io_uring"] = "opened" if ring >= 0 else ctypes.get_errno()
outcomes
"""
        outcomes = _value(await kernel.call(code))
    finally:
        listener.close()
    assert isinstance(outcomes, dict)
    assert "connected" not in outcomes.values() and outcomes["dns"] != "resolved", outcomes
    assert outcomes["tcp_loopback"] == "PermissionError"  # the seccomp filter: no socket but AF_UNIX
    assert outcomes["io_uring"] == 38  # ENOSYS: the filter's; an io_uring could open sockets around it
    assert listener.accepted == 0
    await _platform_still_runs_code()


async def test_the_platforms_environment_and_processes_are_out_of_sight(kernel: KernelProcess) -> None:
    code = f"""
import os
seen = []
for pid in [p for p in os.listdir("/proc") if p.isdigit()] + ["{os.getpid()}", "{os.getppid()}"]:
    try:
        seen.append(open(f"/proc/{{pid}}/environ", "rb").read().decode(errors="replace"))
    except OSError:
        pass
[sorted(os.environ), "{SECRET}" in "".join(seen) or any("PA_" in s or "AWS_" in s for s in seen),
 sorted(p for p in os.listdir("/proc") if p.isdigit())]
"""
    names, leaked, pids = _value(await kernel.call(code))  # type: ignore[misc]
    assert not leaked
    assert not [n for n in names if n.startswith(("PA_", "AWS_", "DATABASE", "REDIS", "OPENAI", "ANTHROPIC"))]
    assert pids == ["1", "2"]  # its own PID namespace: bwrap's init and the kernel, nothing of the host


async def test_the_projects_files_local_data_and_home_are_not_there(kernel: KernelProcess) -> None:
    targets = [
        ROOT / "pyproject.toml",
        ROOT / "shared" / "personal_agent" / "settings.py",
        ROOT / ".local",
        Path.home() / ".local",
        Path.home() / ".aws",
        ROOT / ".venv" / "pyvenv.cfg",
        Path("/etc/passwd"),
    ]
    code = f"""
import os
found = {{}}
for path in {[str(t) for t in targets]!r}:
    try:
        found[path] = os.listdir(path) if os.path.isdir(path) else len(open(path, "rb").read())
    except OSError as exc:
        found[path] = type(exc).__name__
found
"""
    found = _value(await kernel.call(code))
    assert isinstance(found, dict)
    assert set(found.values()) <= {"FileNotFoundError", "PermissionError"}, found
    writes = await kernel.call("open('/usr/lib/pa-planted', 'w')")
    assert writes.error is not None and "Read-only file system" in writes.error


async def test_no_process_outlives_the_call(kernel: KernelProcess) -> None:
    marker = "4242.125"
    code = f"""
import os, subprocess
subprocess.Popen(["sleep", "{marker}"])
if os.fork() == 0:  # a daemon: fork again, leave the parent, keep running
    if os.fork() == 0:
        os.setsid()
        import time
        while True:
            time.sleep(0.05)
    os._exit(0)
"started"
"""
    first = await kernel.call(code)
    assert first.value == "'started'" and first.processes_killed >= 2
    after = _value(await kernel.call("import os\nsorted(p for p in os.listdir('/proc') if p.isdigit())"))
    assert after == ["1", "2"]
    on_host = [p for p in os.listdir("/proc") if p.isdigit() and marker in _cmdline(p)]
    assert on_host == []


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


async def test_memory_past_the_limit_is_refused_and_the_session_goes_on(kernel: KernelProcess) -> None:
    await kernel.call("kept = 'still here'")
    result = await kernel.call("big = bytearray(3 * 2**30)")
    assert result.error is not None and "MemoryError" in result.error
    assert (await kernel.call("kept")).value == "'still here'"


async def test_an_infinite_loop_is_killed_at_the_wall_clock_limit() -> None:
    session = await BubblewrapBackend(LIMITS.model_copy(update={"wall_seconds": 2.0})).open("org-a")
    try:
        result = await session.call("while True:\n    pass")
        assert result.ended is not None and "wall-clock" in result.ended
        assert not session.alive and session.process.returncode is not None
        assert "ended" in (await session.call("1")).error  # type: ignore[operator]
    finally:
        await session.close()
    await _platform_still_runs_code()


async def test_cpu_seconds_are_a_session_limit() -> None:
    session = await BubblewrapBackend(LIMITS.model_copy(update={"cpu_seconds": 1, "wall_seconds": 60})).open("o")
    try:
        result = await session.call("while True:\n    pass")
        assert result.ended is not None and "CPU seconds" in result.ended
    finally:
        await session.close()


async def test_a_1_gb_file_is_cut_at_the_file_size_limit(kernel: KernelProcess) -> None:
    code = """
written = 0
try:
    with open("big.bin", "wb") as fh:
        for _ in range(1024):
            fh.write(b"0" * 2**20)
            written += 2**20
except OSError as exc:
    failure = str(exc)
import os
[written, os.path.getsize("big.bin"), failure]
"""
    written, size, failure = _value(await kernel.call(code))  # type: ignore[misc]
    assert written <= LIMITS.file_bytes and size <= LIMITS.file_bytes
    assert "File too large" in failure


async def test_printing_100_mb_is_capped(kernel: KernelProcess) -> None:
    result = await kernel.call("for _ in range(100):\n    print('x' * 2**20)")
    assert len(result.stdout) < LIMITS.output_chars + 200
    assert "cut off" in result.stdout
    stray = await kernel.call("import os\nfor _ in range(100):\n    os.write(1, b'y' * 2**20)")  # below Python
    assert len(stray.stdout) < LIMITS.output_chars + 200 and stray.error is not None  # the file size limit


async def test_processes_are_limited(kernel: KernelProcess) -> None:
    code = """
import subprocess
started, failure = [], None
try:
    for _ in range(500):
        started.append(subprocess.Popen(["sleep", "30"]))
except OSError as exc:
    failure = type(exc).__name__
[len(started), failure]
"""
    count, failure = _value(await kernel.call(code))  # type: ignore[misc]
    assert count < LIMITS.processes and failure in ("BlockingIOError", "OSError")


async def test_two_sessions_never_see_each_other() -> None:
    backend = BubblewrapBackend(LIMITS)
    a, b = await backend.open("org-a"), await backend.open("org-b")
    try:
        await a.call("secret = 'org a data'\nopen('notes.txt', 'w').write('org a file')")
        seen = await b.call("import os\n[os.listdir('.'), 'secret' in globals(), sorted(os.listdir('/proc'))[:3]]")
        listing, has_secret, _ = _value(seen)  # type: ignore[misc]
        assert listing == [] and has_secret is False
    finally:
        await a.close()
        await b.close()


async def test_nothing_survives_the_session() -> None:
    session = await BubblewrapBackend(LIMITS).open("org-a")
    await session.call("open('left.txt', 'w').write('x')\nimport subprocess\nsubprocess.Popen(['sleep', '4343.5'])")
    pid = session.process.pid
    await session.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not [p for p in os.listdir("/proc") if p.isdigit() and "4343.5" in _cmdline(p)]
    fresh = await BubblewrapBackend(LIMITS).open("org-a")
    try:
        assert _value(await fresh.call("import os\nos.listdir('.')")) == []
    finally:
        await fresh.close()


async def test_the_code_is_not_root_has_no_capability_and_gains_none(kernel: KernelProcess) -> None:
    code = """
import os
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
[os.getuid(), os.geteuid(), os.getgid(), os.getgroups(),
 [status[k].strip() for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs")]]
"""
    seen = _value(await kernel.call(code))
    assert isinstance(seen, list)
    uid, euid, gid, groups, caps = seen
    inh, prm, eff, bnd, amb, nnp = (str(c) for c in caps)
    assert uid != 0 and euid != 0 and gid != 0
    assert groups == [] or os.geteuid() != 0  # as root: the one-off uid has no groups
    assert int(eff, 16) == 0 and int(prm, 16) == 0 and int(amb, 16) == 0
    # As root, bwrap keeps CAP_SETUID and CAP_SETGID (bits 6 and 7) for the kernel's setuid: they stay inheritable
    # (and the bounding set is not emptied), which grants nothing with no permitted or ambient one and no_new_privs.
    assert int(inh, 16) & ~0xC0 == 0 and bnd
    assert nnp == "1"  # a setuid binary gains nothing
    root_attempt = await kernel.call("import os; os.setuid(0)")
    assert root_attempt.error is not None and "PermissionError" in root_attempt.error
