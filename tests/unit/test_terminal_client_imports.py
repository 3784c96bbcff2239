"""The terminal client installs without the server (`pipx install personal-agent` brings httpx, rich, textual and
keyring; the server is the `server` extra): `pa --help`, the client commands' help and the modules they load when
they run import nothing else. Checked in a fresh interpreter that refuses every third-party import outside the
client's dependencies, as a venv holding only those would (tests/e2e/test_terminal_install.py installs the wheel)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Import names of the client's dependency closure (`uv export --no-dev --no-emit-project`, no extras).
CLIENT = {
    "personal_agent",
    "httpx",
    "httpcore",
    "h11",
    "anyio",
    "sniffio",
    "idna",
    "certifi",
    "rich",
    "pygments",
    "markdown_it",
    "mdurl",
    "mdit_py_plugins",
    "linkify_it",
    "uc_micro",
    "textual",
    "platformdirs",
    "typing_extensions",
    "keyring",
    "jaraco",
    "more_itertools",
    "importlib_metadata",
    "zipp",
    "backports",
    "lazy_importer",
    "jeepney",
    "secretstorage",
    "cryptography",
    "cffi",
    "_cffi_backend",
    "pycparser",
}
GUARD = """
import importlib.abc, json, sys
allowed = set(sys.stdlib_module_names) | set(json.loads(sys.argv[1]))
refused = []
class ServerOnly(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top not in allowed and not top.startswith("_"):
            refused.append(top)
            raise ImportError(f"{name} is not a dependency of the terminal client")
        return None
sys.meta_path.insert(0, ServerOnly())
"""


def _under_guard(body: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", GUARD + body, json.dumps(sorted(CLIENT))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_pa_help_and_the_client_commands_import_only_the_clients_dependencies() -> None:
    body = """
import contextlib, io
from personal_agent.cli import main
for argv in (["--help"], ["chat", "--help"], ["login", "--help"], ["logout", "--help"], ["run", "--help"],
             ["runs", "--help"], ["eval", "--help"]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        main(argv)
    assert "usage: pa" in out.getvalue(), (argv, out.getvalue())
import personal_agent.terminal.chat_app, personal_agent.terminal.device_login, personal_agent.terminal.run_command
# A client command runs to its first request: nothing listens on port 9, so it fails as a user sees it, in one line.
code = main(["run", "--url", "http://127.0.0.1:9", "--token", "t", "hello"])
assert code == 1, code
print("REFUSED", sorted(set(refused)))
"""
    done = _under_guard(body)
    assert done.returncode == 0, done.stderr
    assert "pa run: cannot reach http://127.0.0.1:9" in done.stderr
    refused = done.stdout.split("REFUSED", 1)[1]
    # Optional imports a library tries and does without (httpx's CLI) may be refused; no server package is asked for.
    for server_package in ("fastapi", "sqlalchemy", "pydantic", "pydantic_ai", "psycopg", "boto3", "redis"):
        assert f"'{server_package}'" not in refused, refused


def test_the_guard_refuses_what_the_server_imports() -> None:
    done = _under_guard("import personal_agent.api.app\n")
    assert done.returncode != 0 and "is not a dependency of the terminal client" in done.stderr
