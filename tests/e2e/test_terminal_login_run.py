"""The terminal client against `pa dev` as a user runs both: `pa login` with the device grant (the test plays the
person who approves the code, through the API the web chat's /device page calls), the login refreshed and revoked,
and `pa run` in a pipe with `--json` and its exit codes (success, cancelled, failed, over budget at launch and in the
middle of a run, denied approval); `git diff | pa run --agent reviewer "review this"` runs that agent on both, and
`pa runs events --follow` prints a run's every event once, across its pause for an approval, to its end. Where
the machine has an OS keyring the tokens go there and never to the file: a keyring backend of the test's own, loaded
by keyring's own mechanism (PYTHON_KEYRING_BACKEND), stands in for the desktop's."""

from __future__ import annotations

import json
import signal
import stat
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.pa_dev import PA, ROOT, DevServer, running_pa_dev
from tests.e2e.terminal_client import (
    client_env,
    pa,
    pending_approval,
    personal_token,
    scripted_model,
    stream_log,
    wait_for,
)
from tests.fake_provider import running_fake_provider, tool_results

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    # Dev tokens live 60 s: a stored login is refreshed on every use within its last minute.
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev"), env_extra={"PA_DEV_TOKEN_TTL_SECONDS": "60"}) as dev:
        yield dev


def _device_login(server: DevServer, env: dict[str, str], approver: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`pa login`, with the person entering the code it prints (as the web chat's /device page does)."""
    proc = subprocess.Popen(
        [str(PA), "login"], cwd=ROOT / "docs", env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert "enter the code" in first, first
    user_code = first.rsplit(" ", 1)[-1].strip()
    assert "/device" in first
    with httpx.Client(base_url=server.url, timeout=30) as http:
        wrong = http.post("/api/v1/dev/device/verify", json={"user_code": "ZZZZ-ZZZZ"}, headers=approver)
        assert wrong.status_code == 404 and wrong.json()["code"] == "device_code_not_found"
        anonymous = http.post("/api/v1/dev/device/verify", json={"user_code": user_code})
        assert anonymous.status_code == 401
        ok = http.post("/api/v1/dev/device/verify", json={"user_code": user_code.lower()}, headers=approver)
        assert ok.status_code == 200 and ok.json() == {"user_code": user_code, "status": "approved"}
        again = http.post("/api/v1/dev/device/verify", json={"user_code": user_code}, headers=approver)
        assert again.status_code == 404  # a code is approved once
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, first + out, err)


def test_device_login_refresh_and_logout(server: DevServer, tmp_path: Path) -> None:
    env = client_env(server, tmp_path / "config")
    assert pa(env, "run", "hello").returncode == 2  # not signed in yet: bad usage, with the way out
    done = _device_login(server, env, server.auth_for("carol", org="e2e"))
    assert done.returncode == 0, done.stderr
    assert "Signed in to" in done.stdout and "as carol (org e2e)" in done.stdout
    stored = tmp_path / "config" / "credentials.json"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600  # no keyring here: a file only the user can read
    first = json.loads(stored.read_text())[server.url]

    # The stored login runs as carol; its access token expires within a minute, so it was refreshed (rotated).
    ran = pa(env, "run", "--json", "hello there")
    assert ran.returncode == 0, ran.stderr
    refreshed = json.loads(stored.read_text())[server.url]
    assert refreshed["refresh_token"] != first["refresh_token"]
    with httpx.Client(base_url=server.url, timeout=30) as http:
        me = http.get("/api/v1/me", headers={"Authorization": f"Bearer {refreshed['access_token']}"}).json()
        assert me["subject"] == "carol"
        reused = http.post(
            "/api/v1/dev/device/token", data={"grant_type": "refresh_token", "refresh_token": first["refresh_token"]}
        )
        assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"  # spent by rotation

        # An access token the server refuses (401) before its time is refreshed once and the call retried.
        doc = json.loads(stored.read_text())
        doc[server.url] |= {"access_token": "not-a-token", "expires_at": 4e9}
        stored.write_text(json.dumps(doc))
        again = pa(env, "run", "--json", "hello again")
        assert again.returncode == 0, again.stderr
        refreshed = json.loads(stored.read_text())[server.url]
        assert refreshed["access_token"] != "not-a-token"

        # `pa logout` revokes the refresh token at the issuer and forgets the login.
        out = pa(env, "logout")
        assert out.returncode == 0 and "Signed out" in out.stdout
        revoked = http.post(
            "/api/v1/dev/device/token",
            data={"grant_type": "refresh_token", "refresh_token": refreshed["refresh_token"]},
        )
        assert revoked.status_code == 400 and revoked.json()["error"] == "invalid_grant"
    assert server.url not in json.loads(stored.read_text())
    assert pa(env, "run", "hello").returncode == 2


# A keyring backend as a desktop one plugs in (keyring.backend.KeyringBackend), keeping its secrets in one JSON file
# the test reads: {service: {username: password}}.
VAULT_BACKEND = """
import json, os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class Vault(KeyringBackend):
    priority = 10

    def _load(self):
        path = Path(os.environ["PA_TEST_VAULT"])
        return json.loads(path.read_text()) if path.exists() else {}

    def _save(self, data):
        Path(os.environ["PA_TEST_VAULT"]).write_text(json.dumps(data))

    def get_password(self, service, username):
        return self._load().get(service, {}).get(username)

    def set_password(self, service, username, password):
        data = self._load()
        data.setdefault(service, {})[username] = password
        self._save(data)

    def delete_password(self, service, username):
        data = self._load()
        if username not in data.get(service, {}):
            raise PasswordDeleteError(username)
        del data[service][username]
        self._save(data)
"""


def test_a_login_goes_to_the_os_keyring_and_not_to_the_file(server: DevServer, tmp_path: Path) -> None:
    (tmp_path / "backend").mkdir()
    (tmp_path / "backend" / "vault_keyring.py").write_text(VAULT_BACKEND)
    vault, config = tmp_path / "vault.json", tmp_path / "config"
    env = client_env(
        server,
        config,
        PYTHON_KEYRING_BACKEND="vault_keyring.Vault",
        PYTHONPATH=str(tmp_path / "backend"),
        PA_TEST_VAULT=str(vault),
    )

    def in_keyring() -> dict[str, str] | None:
        stored = json.loads(vault.read_text()).get("personal-agent", {}).get(server.url) if vault.exists() else None
        return json.loads(stored) if stored else None

    def files_with(secret: str) -> list[Path]:
        return [f for f in config.rglob("*") if f.is_file() and secret in f.read_text()] if config.exists() else []

    done = _device_login(server, env, server.auth_for("fay", org="e2e"))
    assert done.returncode == 0, done.stderr
    assert "as fay (org e2e); stored in keyring" in done.stdout
    first = in_keyring()
    assert first is not None and first["refresh_token"]
    assert not (config / "credentials.json").exists() and files_with(first["refresh_token"]) == []

    # The stored login works from the keyring; refreshed (rotated), the new tokens go back to the keyring.
    ran = pa(env, "run", "--json", "hello from the keyring")
    assert ran.returncode == 0, ran.stderr
    refreshed = in_keyring()
    assert refreshed is not None and refreshed["refresh_token"] != first["refresh_token"]
    assert not (config / "credentials.json").exists()
    with httpx.Client(base_url=server.url, timeout=30) as http:
        me = http.get("/api/v1/me", headers={"Authorization": f"Bearer {refreshed['access_token']}"}).json()
        assert me["subject"] == "fay"

        # `pa logout` revokes the refresh token and removes the login from the keyring.
        out = pa(env, "logout")
        assert out.returncode == 0 and "Signed out" in out.stdout, out.stderr
        assert in_keyring() is None and json.loads(vault.read_text()) == {"personal-agent": {}}
        revoked = http.post(
            "/api/v1/dev/device/token",
            data={"grant_type": "refresh_token", "refresh_token": refreshed["refresh_token"]},
        )
        assert revoked.status_code == 400 and revoked.json()["error"] == "invalid_grant"
    assert pa(env, "run", "hello").returncode == 2  # signed out


def test_a_denied_code_fails_the_login(server: DevServer, tmp_path: Path) -> None:
    env = client_env(server, tmp_path / "config")
    proc = subprocess.Popen(
        [str(PA), "login"], cwd=ROOT / "docs", env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None
    user_code = proc.stdout.readline().rsplit(" ", 1)[-1].strip()
    with httpx.Client(base_url=server.url, timeout=30) as http:
        denied = http.post(
            "/api/v1/dev/device/verify",
            json={"user_code": user_code, "decision": "deny"},
            headers=server.auth_for("carol"),
        )
        assert denied.json()["status"] == "denied"
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 4 and "access_denied" in err
    assert not (tmp_path / "config" / "credentials.json").exists()


def test_pa_run_in_a_pipe_with_json(server: DevServer, tmp_path: Path) -> None:
    env = client_env(server, tmp_path / "config", PA_TOKEN=personal_token(server, "dave"))
    ran = pa(env, "run", "--json", "please echo", stdin="alpha beta gamma\n")
    assert ran.returncode == 0, ran.stderr
    doc = json.loads(ran.stdout)
    assert set(doc) >= {"run_id", "chat_id", "status", "answer", "output", "cost_usd"}
    assert doc["status"] == "succeeded" and "alpha beta gamma" in doc["answer"]

    # Plain: the answer streamed to stdout; "what time is it?" makes the demo model call current_time.
    timed = pa(env, "run", "what time is it?")
    assert timed.returncode == 0, timed.stderr
    assert timed.stdout.strip()
    run_id = json.loads(pa(env, "run", "--json", "what time is it?").stdout)["run_id"]
    events = [json.loads(line) for line in pa(env, "runs", "events", run_id).stdout.splitlines()]
    assert any(e.get("toolCallName") == "current_time" for e in events if e["type"] == "TOOL_CALL_START")
    got = json.loads(pa(env, "runs", "get", run_id).stdout)
    assert got["status"] == "succeeded"

    assert pa(env, "run", "--no-wait", "hi").stdout.strip()  # the run id
    assert pa(env, "run", stdin="").returncode == 2  # no prompt at all


def _as_a_foreground_job() -> None:
    # A shell gives its foreground job Ctrl-C; `make test` runs this shard in the background, whose SIGINT is ignored
    # (and inherited so: Python then raises no KeyboardInterrupt).
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _following(env: dict[str, str]) -> subprocess.Popen[str]:
    """`pa run` of an acting request (it waits on an approval), as typed in a terminal."""
    return subprocess.Popen(
        [str(PA), "run", "send hello to bob"],
        cwd=ROOT / "docs",
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_as_a_foreground_job,
    )


def test_pa_run_exit_codes(server: DevServer, tmp_path: Path) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        # CI's way in: a personal access token in PA_TOKEN.
        pat = personal_token(server, "erin")
        user = {"Authorization": f"Bearer {pat}"}
        env = client_env(server, tmp_path / "config", PA_TOKEN=pat)
        seen: set[str] = set()
        # A denied approval: exit 4.
        proc = _following(env)
        approval = pending_approval(http, user, seen)
        http.post(f"/api/v1/approvals/{approval['id']}", json={"decision": "deny"}, headers=user).raise_for_status()
        proc.communicate(timeout=120)
        assert proc.returncode == 4

        # Cancelled while waiting on an approval: exit 1.
        proc = _following(env)
        approval = pending_approval(http, user, seen)
        assert pa(env, "runs", "cancel", approval["run_id"]).returncode == 0
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 1, err

        # Ctrl-C (SIGINT) while it follows, and a CI job stopped (SIGTERM): the run is cancelled on the server, exit 1.
        for stop in (signal.SIGINT, signal.SIGTERM):
            proc = _following(env)
            approval = pending_approval(http, user, seen)
            proc.send_signal(stop)
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 1 and "cancelled" in err, (stop, err)
            run_url = f"/api/v1/runs/{approval['run_id']}"
            wait_for(
                lambda url=run_url: http.get(url, headers=user).json()["status"] == "cancelled", "the run cancelled"
            )

        # Over budget: erin's monthly cap is 0, so the launch is refused: exit 3.
        admin = server.auth_for("root", "org-admin")
        me = http.get("/api/v1/me", headers=user).json()
        capped = http.put(
            "/api/v1/admin/budgets", json={"scope": "user", "user_id": me["user_id"], "monthly_usd": "0"}, headers=admin
        )
        assert capped.status_code == 200, capped.text
        refused = pa(env, "run", "--json", "hello")
        assert refused.returncode == 3 and "budget_exceeded" in refused.stderr


def test_pa_run_with_an_agent_reads_the_prompt_from_a_pipe(server: DevServer, tmp_path: Path) -> None:
    admin = server.auth_for("root", "org-admin")
    body = {
        "name": "Reviewer",
        "slug": "reviewer",
        "model": "offline:demo",
        "visibility": "org",
        "instructions": "Review the change you are given.",
        "tools": [],
    }
    created = httpx.post(f"{server.url}/api/v1/agents", json=body, headers=admin, timeout=30)
    assert created.status_code == 201, created.text
    token = personal_token(server, "gina")
    user = {"Authorization": f"Bearer {token}"}
    env = client_env(server, tmp_path / "config", PA_TOKEN=token)
    diff = "--- a/app.py\n+++ b/app.py\n+print('hello')\n"

    # `git diff | pa run --agent reviewer "review this"`: the answer on stdout, from that agent, of prompt and diff.
    ran = pa(env, "run", "--agent", "reviewer", "review this", stdin=diff)
    assert ran.returncode == 0, ran.stderr
    assert "You said:" in ran.stdout and "review this" in ran.stdout and "print('hello')" in ran.stdout
    with httpx.Client(base_url=server.url, headers=user, timeout=30) as http:
        (listed,) = http.get("/api/v1/runs").json()["items"]
        run = http.get(f"/api/v1/runs/{listed['id']}").json()
        assert run["status"] == "succeeded" and run["agent"]["slug"] == "reviewer"
        assert http.get(f"/api/v1/chats/{run['chat_id']}").json()["agent_id"] == created.json()["id"]
        transcript = http.get(f"/api/v1/chats/{run['chat_id']}/messages").json()["items"]
        assert transcript[0]["role"] == "user" and transcript[0]["text"] == f"review this\n\n{diff}"

    # The same with --json: the document names the run, which ran as the agent.
    doc = json.loads(pa(env, "run", "--json", "--agent", "reviewer", "review this", stdin=diff).stdout)
    with httpx.Client(base_url=server.url, headers=user, timeout=30) as http:
        assert http.get(f"/api/v1/runs/{doc['run_id']}").json()["agent"]["slug"] == "reviewer"
    assert doc["status"] == "succeeded" and "print('hello')" in doc["answer"]

    # An agent that is not there, or a chat that is not the caller's: bad usage (2), the API's code said.
    unknown = pa(env, "run", "--agent", "no-such-agent", "review this")
    assert unknown.returncode == 2 and "agent_not_found" in unknown.stderr, unknown.stderr
    foreign = pa(env, "run", "--chat", str(uuid.uuid4()), "hello")
    assert foreign.returncode == 2 and "chat_not_found" in foreign.stderr, foreign.stderr


def test_pa_runs_events_follows_a_run_to_its_end(server: DevServer, tmp_path: Path) -> None:
    token = personal_token(server, "hugo")
    user = {"Authorization": f"Bearer {token}"}
    env = client_env(server, tmp_path / "config", PA_TOKEN=token)
    started = json.loads(pa(env, "run", "--no-wait", "--json", "send hello to bob").stdout)
    follow = subprocess.Popen(
        [str(PA), "runs", "events", started["run_id"], "--follow"],
        cwd=ROOT / "docs",
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    with httpx.Client(base_url=server.url, headers=user, timeout=30) as http:
        approval = pending_approval(http, user)
        assert approval["run_id"] == started["run_id"]
        # Without --follow the events stop where the run waits for the person: it paused, it did not end.
        paused = [json.loads(line) for line in pa(env, "runs", "events", started["run_id"]).stdout.splitlines()]
        assert paused[-1]["type"] == "RUN_FINISHED" and paused[-1]["outcome"]["type"] == "interrupt"
        assert follow.poll() is None  # --follow waits on across the pause
        http.post(f"/api/v1/approvals/{approval['id']}", json={"decision": "approve"}).raise_for_status()
        out, err = follow.communicate(timeout=120)  # it exits by itself when the run ends
        assert follow.returncode == 0, err
        assert http.get(f"/api/v1/runs/{started['run_id']}").json()["status"] == "succeeded"
    followed = [json.loads(line) for line in out.splitlines()]
    assert followed[: len(paused)] == paused
    assert followed[-1]["type"] == "RUN_FINISHED" and (followed[-1].get("outcome") or {}).get("type") != "interrupt"
    assert any(e.get("toolCallName") == "send_demo_message" for e in followed if e["type"] == "TOOL_CALL_START")
    # Each event of the run once, in order: what it printed is the stream the server kept, event for event.
    kept = stream_log(server, started["run_id"], user)
    assert len({event_id for event_id, _ in kept}) == len(kept)
    assert followed == [event for _, event in kept]


def _keeps_calling_the_clock(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"name": "current_time", "arguments": {}}]}


def test_a_failed_run_exits_1(server: DevServer, tmp_path: Path) -> None:
    """A model that never stops calling a tool: the engine fails the run at its limit of model requests (a model
    that errors would not do: the run falls back to another model, here the offline demo, and succeeds)."""
    token = personal_token(server, "ivan")
    env = client_env(server, tmp_path / "config", PA_TOKEN=token)
    with running_fake_provider(_keeps_calling_the_clock) as fake:
        model = scripted_model(server, fake.base_url, "looping")
        failed = pa(env, "run", "--model", model, "what time is it?")
        assert failed.returncode == 1, failed.stderr
        assert failed.stderr.startswith("pa run: failed: "), failed.stderr
        doc = json.loads(pa(env, "run", "--json", "--model", model, "what time is it?").stdout)
    assert doc["status"] == "failed" and doc["error"]["code"] == "limit_exceeded", doc
    assert doc["answer"] == "" and doc["output"] is None


def _reads_the_clock(messages: list[dict[str, Any]]) -> dict[str, Any]:
    if messages[-1].get("role") == "tool":
        return {"content": "It is " + tool_results(messages)[-1]}
    return {"tool_calls": [{"name": "current_time", "arguments": {}}]}


def test_a_budget_spent_in_the_middle_of_a_run_exits_3(server: DevServer, tmp_path: Path) -> None:
    """The launch passes (nothing spent yet); the run's first model request costs more than the cap; the engine
    refuses its second (the budget is checked before each request), so the run fails `budget_exceeded`."""
    token = personal_token(server, "jane")
    user = {"Authorization": f"Bearer {token}"}
    env = client_env(server, tmp_path / "config", PA_TOKEN=token)
    with running_fake_provider(_reads_the_clock) as fake, httpx.Client(base_url=server.url, timeout=30) as http:
        # 10 cents a token: the scripted model's 25 tokens a request cost $2.50, against a cap of $1.
        model = scripted_model(server, fake.base_url, "pricey", input_price="100000", output_price="100000")
        me = http.get("/api/v1/me", headers=user).json()
        capped = http.put(
            "/api/v1/admin/budgets",
            json={"scope": "user", "user_id": me["user_id"], "monthly_usd": "1"},
            headers=server.auth_for("root", "org-admin"),
        )
        assert capped.status_code == 200, capped.text
        ran = pa(env, "run", "--json", "--model", model, "what time is it?")
        assert ran.returncode == 3, ran.stderr
        doc = json.loads(ran.stdout)
        assert doc["status"] == "failed" and doc["error"]["code"] == "budget_exceeded"
        assert len(fake.requests) == 1  # the first request went out; the second was refused
        events = [json.loads(line) for line in pa(env, "runs", "events", doc["run_id"]).stdout.splitlines()]
        kinds = [e["type"] for e in events]
        assert "TOOL_CALL_RESULT" in kinds and kinds[-1] == "RUN_ERROR"  # mid-run: after its first round
        assert events[-1]["code"] == "budget_exceeded"
        assert http.get(f"/api/v1/runs/{doc['run_id']}", headers=user).json()["cost_usd"] > 1

        plain = pa(env, "run", "--model", model, "what time is it?")  # now spent: refused at launch, also 3
        assert plain.returncode == 3 and "budget_exceeded" in plain.stderr
