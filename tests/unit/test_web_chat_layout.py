"""The web chat's shape (issue 29): one way to call the API (by operation id, `call` in src/api/client.ts), files
by feature (chat, tools and approvals each in one folder), the chat composable split in three, and the frontend
linter in `make test`."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "frontend" / "src"


def _sources() -> dict[str, str]:
    return {
        str(p.relative_to(SRC)): p.read_text(encoding="utf-8")
        for p in SRC.rglob("*")
        if p.suffix in (".ts", ".vue") and not p.name.endswith(".d.ts")
    }


def test_the_web_chat_calls_the_api_only_by_operation_id() -> None:
    # `request` (method + path) is the HTTP layer under `call`; nothing else names a method and a path.
    callers = sorted(
        name
        for name, text in _sources().items()
        if re.search(r"\brequest\s*(<[^>]*>)?\s*\(", text) and name not in ("api/http.ts", "api/client.ts")
    )
    assert callers == []
    literal_routes = sorted(
        name
        for name, text in _sources().items()
        if re.search(r"[\"`]/api/v1/(?!feed\"|runs/\$\{)", text)
        and not name.endswith(".test.ts")
        and name != "api/operations.ts"
    )
    assert literal_routes == [], "call the operation by id instead of writing its path"


def test_chat_tools_and_approvals_each_live_in_one_folder() -> None:
    names = _sources()
    for feature, pattern in (
        ("approvals", r"Approval"),
        ("tools", r"^Tool|McpServer"),
        ("chat", r"^Chat|^Subagent"),
    ):
        components = [n for n in names if n.endswith(".vue") and re.search(pattern, Path(n).name)]
        assert components and all(n.startswith(f"{feature}/") for n in components), (feature, components)
    assert not [n for n in names if n.startswith(("state/approvals", "state/chats", "views/Chats", "views/Approvals"))]


def test_the_chat_composable_is_the_transcript_the_live_run_and_the_approvals() -> None:
    use_chat = (SRC / "chat" / "useChat.ts").read_text(encoding="utf-8")
    for composable in ("useTranscript", "useLiveRun", "useChatApprovals"):
        assert f"{composable}(" in use_chat
    assert use_chat.count("ref(") + use_chat.count("ref<") <= 4, "state belongs in the composables"


def test_make_test_runs_the_frontend_linter_with_the_vue_and_typescript_presets() -> None:
    dry = subprocess.run(["make", "-n", "lint"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    assert "npm run --silent lint" in dry.stdout
    test_target = re.search(r"^test: (.*)$", (ROOT / "Makefile").read_text(), re.M)
    assert test_target and "lint" in test_target.group(1).split()
    scripts = json.loads((ROOT / "frontend" / "package.json").read_text())["scripts"]
    assert scripts["lint"].startswith("eslint ")
    config = (ROOT / "frontend" / "eslint.config.mjs").read_text()
    assert "pluginVue.configs" in config and "vueTsConfigs.recommended" in config
