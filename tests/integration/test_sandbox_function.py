"""The sandbox function (the AWS backend, functions/sandbox) on its real path, locally: the folder `make build`
makes of it (app.py, kernel.py, seccomp.py) runs in a stand-in execution environment (tests/sandbox_function_host.py
under bwrap: a PID namespace of its own, an unprivileged user with no capabilities, and the HOST's network, as a
Lambda environment has its loopback with the Runtime API on it), and the platform's session (`LambdaSession`) sends
it its calls. What it shows: a call runs, a new environment replays the session's earlier cells, code cannot open a
socket (the seccomp filter, installed without privileges), a call past its wall-clock limit is stopped and the
session goes on, and nothing the code started or wrote is left after the call. With the bucket (moto S3), a large
input file reaches the code and a large output comes back through presigned URLs the platform made, not the
invocation's payload."""

from __future__ import annotations

import ast
import base64
import ctypes
import errno
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit
from uuid import uuid4

import httpx
import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from personal_agent.knowledge import objects as bucket_objects
from personal_agent.sandbox import run_files, sessions
from personal_agent.sandbox.bubblewrap import probe, scientific_site_packages
from personal_agent.sandbox.config import SandboxLimits
from personal_agent.sandbox.interface import CallResult, InFile
from personal_agent.sandbox.lambda_backend import LambdaBackend, LambdaSession
from tests.auth import auth_headers
from tests.runs import start_run
from tests.scripted import scripted_model
from tests.sse import read_events

ROOT = Path(__file__).resolve().parents[2]
HOST = ROOT / "tests" / "sandbox_function_host.py"
LIMITS = SandboxLimits(wall_seconds=20, cpu_seconds=60, memory_bytes=1024 * 2**20)


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The function as `sam build` packs it (its Makefile's target)."""
    out = tmp_path_factory.mktemp("sandbox-function-task")
    build = ["make", "-s", "-C", str(ROOT / "functions" / "sandbox"), "build-SandboxFunction"]
    subprocess.run([*build, f"ARTIFACTS_DIR={out}", f"REPO_ROOT={ROOT}"], check=True, timeout=60)
    assert sorted(p.name for p in out.iterdir()) == ["app.py", "kernel.py", "seccomp.py"]
    return out


def _environment_argv(*command: str) -> list[str]:
    """bwrap: everything of the host visible (as Lambda's environment sees its own filesystem), the host's network,
    but a PID namespace and an unprivileged user without capabilities, like the function's sbx_user."""
    bwrap = shutil.which("bwrap")
    assert bwrap is not None and probe().ok, probe().detail  # `make sandbox` installs bubblewrap
    isolation = ["--dev-bind", "/", "/", "--unshare-user", "--uid", "1000", "--gid", "1000", "--unshare-pid"]
    return [bwrap, *isolation, "--proc", "/proc", "--die-with-parent", "--cap-drop", "ALL", "--", *command]


class Environment:
    """One execution environment of the function: the built handler, called once per invocation."""

    def __init__(self, task: Path, tmp: Path, extra_env: dict[str, str] | None = None) -> None:
        self.tmp = tmp
        argv = _environment_argv(sys.executable, str(HOST), str(task), str(tmp), scientific_site_packages())
        env = {"PATH": "/usr/bin:/bin", "AWS_LAMBDA_FUNCTION_NAME": "test-sandbox", "LANG": "C.UTF-8"}
        # `extra_env` reaches the handler only: bwrap reads it from a descriptor (`--args`), so the stand-in's own
        # init (bwrap, pid 1 of the namespace) holds it in neither its environment nor its command line.
        read, write = os.pipe()
        os.write(
            write, b"".join(b"--setenv\0%s\0%s\0" % (k.encode(), v.encode()) for k, v in (extra_env or {}).items())
        )
        os.close(write)
        argv[1:1] = ["--args", str(read)]
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True, pass_fds=(read,)
        )
        os.close(read)
        self.invocations: list[dict[str, Any]] = []
        self.replies: list[dict[str, Any]] = []

    def invoke(self, request: bytes) -> dict[str, Any]:
        """What `LambdaSession._invoke` gets from Lambda: the handler's reply to this request."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.invocations.append(json.loads(request))
        self.process.stdin.write(request.decode() + "\n")
        self.process.stdin.flush()
        reply: dict[str, Any] = json.loads(self.process.stdout.readline())
        self.replies.append(reply)
        return reply

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def environments(task_dir: Path, tmp_path: Path) -> Iterator[list[Environment]]:
    """A factory's product list: each test starts what it needs with `_start`; all are stopped after it."""
    made: list[Environment] = []
    yield made
    for environment in made:
        environment.close()


def _start(made: list[Environment], task: Path, tmp: Path, extra_env: dict[str, str] | None = None) -> Environment:
    scratch = tmp / f"env-{len(made)}"
    scratch.mkdir()
    environment = Environment(task, scratch, extra_env)
    made.append(environment)
    return environment


def _session(environment: Environment, limits: SandboxLimits = LIMITS, prefix: str = "") -> LambdaSession:
    session = LambdaSession("test-sandbox", "org-a", limits, prefix)
    session._invoke = environment.invoke  # type: ignore[method-assign]  # Lambda's Invoke, here a pipe
    return session


def _value(result: CallResult) -> Any:
    assert result.error is None, (result.error, result.stderr)
    assert result.value is not None
    return ast.literal_eval(result.value)


CSV = b"n\n1\n2\n3\n"


async def test_a_call_runs_and_a_new_environment_replays_the_earlier_cells(
    environments: list[Environment], task_dir: Path, tmp_path: Path
) -> None:
    first = _start(environments, task_dir, tmp_path)
    session = _session(first)
    code = "import pandas as pd\ntotal = int(pd.read_csv('numbers.csv').n.sum())\nopen('out.txt', 'w').write('x')\n"
    ran = await session.call(code + "total", (InFile("numbers.csv", CSV),))
    assert _value(ran) == 6 and [f.name for f in ran.files] == ["out.txt"]
    assert list(first.tmp.iterdir()) == []  # /tmp wiped after the call: scratch, files, the kernel's own

    second = _start(environments, task_dir, tmp_path)  # Lambda sent the next call to another environment
    session._invoke = second.invoke  # type: ignore[method-assign]
    again = await session.call("total + 1")
    assert _value(again) == 7  # the earlier cell was replayed there, with its file
    assert again.files == ()  # what the replay wrote again is not the new call's output
    assert second.invocations[0]["replay"] == [code + "total"]
    assert [f["name"] for f in second.invocations[0]["files"]] == ["numbers.csv"]
    assert list(second.tmp.iterdir()) == []


async def test_code_on_lambda_cannot_open_a_socket_not_even_to_loopback(
    environments: list[Environment], task_dir: Path, tmp_path: Path
) -> None:
    listener = socket.create_server(("127.0.0.1", 0))  # stands in for the Runtime API on 127.0.0.1:9001
    port = listener.getsockname()[1]
    accepted: list[object] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()), daemon=True).start()
    try:
        # The environment shares the host's network, as Lambda's does: a process there WITHOUT the filter connects.
        probe_code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5).close()"
        env = {"PATH": "/usr/bin:/bin"}
        subprocess.run(_environment_argv(sys.executable, "-I", "-c", probe_code), check=True, timeout=30, env=env)
        session = _session(_start(environments, task_dir, tmp_path))
        outcomes = _value(await session.call(_SOCKETS.replace("PORT", str(port))))
    finally:
        listener.close()
    assert len(accepted) == 1  # the probe's connection only
    assert outcomes["tcp_loopback"] == outcomes["udp_loopback"] == outcomes["tcp6_loopback"] == "PermissionError"
    assert outcomes["netlink"] == outcomes["http_runtime_api"] == "PermissionError"
    assert outcomes["io_uring"] == os.strerror(errno.ENOSYS) and _io_uring_opens_here()  # the filter's, not the host's
    assert outcomes["unix"] == "ok"  # the filter's one family: what Python's own machinery may need
    status = outcomes["status"]
    assert status["Seccomp"] == "2" and status["NoNewPrivs"] == "1"  # the filter, installed by the kernel...
    assert status["CapEff"] == "0000000000000000" and outcomes["uid"] != 0  # ...with no privilege at all


_SOCKETS = """
import os, socket, urllib.request
outcomes = {}
for name, family, kind, address in [
    ("tcp_loopback", socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", PORT)),
    ("udp_loopback", socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", PORT)),
    ("tcp6_loopback", socket.AF_INET6, socket.SOCK_STREAM, ("::1", PORT)),
    ("netlink", socket.AF_NETLINK, socket.SOCK_RAW, None),
]:
    try:
        s = socket.socket(family, kind)
        if address:
            s.settimeout(2)
            s.connect(address)
        outcomes[name] = "opened"
    except OSError as exc:
        outcomes[name] = type(exc).__name__
try:
    urllib.request.urlopen("http://127.0.0.1:PORT/2018-06-01/runtime/invocation/next", timeout=2)
    outcomes["http_runtime_api"] = "answered"
except OSError as exc:
    outcomes["http_runtime_api"] = type(getattr(exc, "reason", exc)).__name__
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
ring = libc.syscall(425, 8, ctypes.create_string_buffer(120))  # io_uring_setup: it could open sockets itself
outcomes["io_uring"] = "opened" if ring >= 0 else os.strerror(ctypes.get_errno())
a, b = socket.socketpair()
a.send(b"x")
outcomes["unix"] = "ok" if b.recv(1) == b"x" else "no"
lines = open("/proc/self/status").read().splitlines()
outcomes["status"] = {k: v.strip() for k, v in (line.split(":", 1) for line in lines)}
outcomes["uid"] = os.getuid()
outcomes
"""


async def test_a_call_past_its_wall_clock_limit_is_stopped_and_the_session_goes_on(
    environments: list[Environment], task_dir: Path, tmp_path: Path
) -> None:
    environment = _start(environments, task_dir, tmp_path)
    session = _session(environment, LIMITS.model_copy(update={"wall_seconds": 2}))
    await session.call("kept = 'still here'")
    stopped = await session.call("import subprocess\nsubprocess.Popen(['sleep', '4343.5'])\nwhile True: pass")
    assert stopped.error is not None and "2 s wall-clock limit" in stopped.error, stopped
    assert stopped.seconds >= 2
    assert _on_host("4343.5") == [] and list(environment.tmp.iterdir()) == []  # killed, wiped
    assert _value(await session.call("kept")) == "still here"  # the stopped cell is not replayed; the rest is


async def test_nothing_the_code_started_or_wrote_outlives_the_call(
    environments: list[Environment], task_dir: Path, tmp_path: Path
) -> None:
    environment = _start(environments, task_dir, tmp_path)
    session = _session(environment)
    marker = "4242.25"
    code = f"""
import os, subprocess
subprocess.Popen(["sleep", "{marker}"])
if os.fork() == 0:  # a daemon: fork again, leave the parent, start a session of its own, keep running
    if os.fork() == 0:
        os.setsid()
        subprocess.Popen(["sleep", "{marker}"], start_new_session=True).wait()
    os._exit(0)
open("/tmp/planted", "w").write("x")  # Lambda's /tmp is the only writable disk; here it is the test's scratch
os.makedirs("deep/er", exist_ok=True)
"started"
"""
    assert _value(await session.call(code.replace("/tmp", str(environment.tmp)))) == "started"
    assert _on_host(marker) == []  # the handler killed every process but its own (and its ancestors')
    assert list(environment.tmp.iterdir()) == []
    assert _value(await session.call("'next'")) == "next"  # the environment goes on serving the session


def _io_uring_opens_here() -> bool:
    """This process (no filter) can set up an io_uring: the machine's kernel has them."""
    ring = ctypes.CDLL(None, use_errno=True).syscall(425, 8, ctypes.create_string_buffer(120))
    if ring >= 0:
        os.close(ring)
    return bool(ring >= 0)


def _on_host(marker: str) -> list[str]:
    """The pids of processes on this machine whose command line holds `marker`."""
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            if marker in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                found.append(pid)
        except OSError:
            continue
    return found


async def test_files_past_what_fits_lambdas_response_are_named_not_returned(
    environments: list[Environment], task_dir: Path, tmp_path: Path
) -> None:
    session = _session(_start(environments, task_dir, tmp_path))
    code = "open('small.txt', 'w').write('x')\nopen('big.bin', 'wb').write(b'0' * 5_000_000)"
    result = await session.call(code)
    assert result.error is None and [f.name for f in result.files] == ["small.txt"]
    assert result.files_left_out == ("big.bin",)  # 5 MB: past the ~4 MB a call may bring back on Lambda


BIG_THEN_CHART = """
import hashlib
import matplotlib.pyplot as plt, numpy as np
data = open('big.bin', 'rb').read()
plt.figure(figsize=(10, 10))
plt.imshow(np.random.default_rng(1).random((500, 500, 3)))
plt.savefig('chart.png', dpi=100)
(len(data), hashlib.sha256(data).hexdigest(), open('small.csv', 'rb').read())
"""


def _expires(url: str) -> int:
    return int(parse_qs(urlsplit(url).query)["X-Amz-Expires"][0])


def _keys(prefix: str) -> list[str]:
    listed = bucket_objects.client().list_objects_v2(Bucket=bucket_objects.bucket(), Prefix=prefix)
    return sorted(o["Key"] for o in listed.get("Contents", []))


async def test_large_files_travel_through_the_bucket_on_urls_the_platform_presigned(
    stack: object, environments: list[Environment], task_dir: Path, tmp_path: Path
) -> None:
    environment = _start(environments, task_dir, tmp_path)
    prefix = run_files.run_prefix(uuid4(), uuid4())
    session = _session(environment, prefix=prefix)
    big = os.urandom(10_000_000)
    result = await session.call(BIG_THEN_CHART, (InFile("big.bin", big), InFile("small.csv", CSV)))
    assert _value(result) == (10_000_000, hashlib.sha256(big).hexdigest(), CSV)  # the code read both
    chart = {f.name: f.data for f in result.files}["chart.png"]
    assert chart.startswith(b"\x89PNG") and len(chart) > run_files.INLINE_BYTES

    sent, reply = environment.invocations[0], environment.replies[0]
    assert len(json.dumps(sent)) < 64_000  # no file bytes past the inline threshold in the payload
    files = {f["name"]: f for f in sent["files"]}
    assert "data" not in files["big.bin"] and base64.b64decode(files["small.csv"]["data"]) == CSV  # small: inline
    assert _expires(files["big.bin"]["url"]) == run_files.GET_EXPIRES_SECONDS == 120
    assert {_expires(u) for u in sent["outputs"]} == {int(LIMITS.wall_seconds) + run_files.PUT_MARGIN_SECONDS}
    assert len(sent["outputs"]) == LIMITS.max_files
    assert reply["files"] == [{"name": "chart.png", "slot": 0, "size": len(chart)}]  # uploaded, not in the reply
    assert len(json.dumps(reply)) < 64_000
    assert _keys(prefix) == [run_files.input_key(prefix, "big.bin")]  # the output slot was read and emptied

    second = _start(environments, task_dir, tmp_path)  # another environment: the file comes from the bucket again
    session._invoke = second.invoke  # type: ignore[method-assign]
    again = await session.call("len(data), len(open('big.bin', 'rb').read())")
    assert _value(again) == (10_000_000, 10_000_000)
    assert "data" not in {f["name"]: f for f in second.invocations[0]["files"]}["big.bin"]
    assert run_files.delete_prefix(prefix) >= 1 and _keys(prefix) == []


CHART = """
import matplotlib.pyplot as plt, numpy as np
plt.figure(figsize=(10, 10))
plt.imshow(np.random.default_rng(2).random((500, 500, 3)))
plt.savefig('chart.png', dpi=100)
"""


async def chart_then_answer(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    done = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
    if not done:
        yield {0: DeltaToolCall(name="run_python", json_args=json.dumps({"code": CHART}), tool_call_id="py_0")}
    else:
        yield json.dumps(done[0].content)


async def test_a_chart_uploaded_by_the_function_comes_back_as_the_chats_attachment(
    http: httpx.AsyncClient,
    make_tenant: Any,
    environments: list[Environment],
    task_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    environment = _start(environments, task_dir, tmp_path)
    monkeypatch.setattr(sessions, "backend", lambda: LambdaBackend("test-sandbox", LIMITS))
    monkeypatch.setattr(LambdaSession, "_invoke", lambda self, request: environment.invoke(request))
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(chart_then_answer) as (model, _):
        run = await start_run(http, headers, model, "draw me something")
        frames = await read_events(http, run["events_url"], headers)
    assert frames[-1].type == "RUN_FINISHED", frames[-1]
    result = json.loads("".join(f.data["delta"] for f in frames if f.type == "TEXT_MESSAGE_CONTENT"))
    assert result["error"] is None, result
    (chart,) = result["files"]
    assert (chart["filename"], chart["kind"]) == ("chart.png", "image") and chart["size"] > run_files.INLINE_BYTES
    assert environment.replies[0]["files"] == [{"name": "chart.png", "slot": 0, "size": chart["size"]}]
    download = (await http.get(f"/api/v1/attachments/{chart['id']}/download", headers=headers)).json()
    async with httpx.AsyncClient() as s3:
        image = (await s3.get(download["url"])).content
    assert image.startswith(b"\x89PNG\r\n\x1a\n") and len(image) == chart["size"]  # the chat's attachment
    assert _keys(run_files.run_prefix(tenant.org_id, run["run_id"])) == []  # the run ended: its sandbox files too


async def test_a_file_the_function_cannot_fetch_fails_the_call_before_any_code_runs(
    stack: object, environments: list[Environment], task_dir: Path, tmp_path: Path
) -> None:
    environment = _start(environments, task_dir, tmp_path)
    prefix = run_files.run_prefix(uuid4(), uuid4())
    session = _session(environment, prefix=prefix)
    session.restore(["kept = 1"], (InFile("gone.bin", b"", run_files.input_key(prefix, "gone.bin")),))  # no object
    failed = await session.call("open('ran', 'w').write('x')")
    assert failed.error is not None and "could not fetch the session's files: the bucket answered 404" in failed.error
    assert failed.files == () and session.cells == ["kept = 1"]  # nothing ran, the cell is not kept
    assert list(environment.tmp.iterdir()) == []


async def test_the_handlers_aws_secrets_are_out_of_the_codes_reach(
    environments: list[Environment], task_dir: Path, tmp_path: Path
) -> None:
    secret = "pa-sandbox-fn-secret-7d2e"  # as Lambda gives the handler its role's credentials
    role = {"AWS_ACCESS_KEY_ID": "ASIATESTKEY", "AWS_SECRET_ACCESS_KEY": secret, "AWS_SESSION_TOKEN": secret}
    session = _session(_start(environments, task_dir, tmp_path, role))
    code = f"""
import os
readable, refused = [], 0
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        readable.append((pid, open(f"/proc/{{pid}}/environ", "rb").read().decode(errors="replace")))
    except OSError:
        refused += 1
[sorted(os.environ), [pid for pid, env in readable if "{secret}" in env or "AWS_SECRET" in env], refused]
"""
    names, leaking, refused = _value(await session.call(code))
    assert not [n for n in names if n.startswith("AWS_")], names
    assert leaking == [], leaking  # no process the code can read holds the secret
    assert refused >= 1  # the handler's own (non-dumpable) environ is there, and refused
    assert any(secret in env for env in _handler_environs())  # seen from the host: the handler did hold it


def _handler_environs() -> list[str]:
    """The environments of the stand-in handlers running now (not bwrap's), read from the host (the test may)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0") if entry.name.isdigit() else []
            if str(HOST).encode() in argv and not argv[0].endswith(b"bwrap"):
                found.append((entry / "environ").read_bytes().decode(errors="replace"))
        except OSError:
            continue
    return found
