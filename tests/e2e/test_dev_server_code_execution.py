"""`run_python` over `pa dev` as a user starts it (driven over HTTP only, the demo model told what to call with its
`/tool NAME {json}` syntax): a CSV sent in a chat is analysed with pandas in the sandbox, the chart the code saves
comes back as an image attachment of the chat (fetched through `GET /attachments/{id}/download`), variables last
between the run's calls, the run's usage includes the sandbox seconds, and /health/deps says what isolates the
code. An org that turns code execution off is not offered the tool (and asking for it by name is a 403)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.e2e.pa_dev import DevServer

pytestmark = pytest.mark.timeout(300)

CSV = b"month,revenue\nJan,120\nFeb,95\nMar,143\nApr,\nMay,160\n"
ANALYSIS = (
    "import pandas as pd\nimport matplotlib.pyplot as plt\n"
    "df = pd.read_csv('sales.csv')\n"
    "ax = df.plot(x='month', y='revenue', kind='bar', title='Revenue')\n"
    "plt.savefig('revenue.png')\n"
    "df.to_csv('clean.csv', index=False)\n"
    "missing = int(df['revenue'].isna().sum())\n"
    "print('rows', len(df))\n"
    "{'total': float(df['revenue'].sum()), 'missing': missing}"
)


def _attach(http: httpx.Client, chat_id: str, filename: str, content_type: str, data: bytes) -> str:
    body = {"filename": filename, "content_type": content_type, "size": len(data)}
    created = http.post(f"/api/v1/chats/{chat_id}/attachments", json=body)
    assert created.status_code == 201, created.text
    form = created.json()["upload"]
    sent = httpx.post(form["url"], data=form["fields"], files={"file": (filename, data, content_type)}, timeout=30)
    assert sent.status_code in (200, 201, 204), sent.text
    return str(created.json()["id"])


def _tool_message(code: str, files: list[str] | None = None) -> str:
    args: dict[str, Any] = {"code": code}
    if files:
        args["files"] = files
    return "/tool run_python " + json.dumps(args)


def _run(http: httpx.Client, chat_id: str, message: str, attachments: list[str] | None = None) -> tuple[str, list[Any]]:
    body: dict[str, Any] = {"message": message, "mode": "inline", "attachments": attachments or []}
    started = http.post(f"/api/v1/chats/{chat_id}/runs", json=body)
    assert started.status_code == 202, started.text
    run_id = started.json()["run_id"]
    with http.stream("GET", f"/api/v1/runs/{run_id}/events") as events:
        seen = [json.loads(line[5:]) for line in events.iter_lines() if line.startswith("data:")]
    assert seen[-1]["type"] == "RUN_FINISHED", seen[-1]
    return run_id, seen


def _tool_result(events: list[Any]) -> dict[str, Any]:
    (result,) = [e for e in events if e["type"] == "TOOL_CALL_RESULT"]
    content = json.loads(result["content"])
    assert isinstance(content, dict)
    return content


def test_a_csv_is_analysed_and_its_chart_comes_back_as_an_image(dev_server: DevServer) -> None:
    with httpx.Client(base_url=dev_server.url, headers=dev_server.auth, timeout=120) as http:
        deps = http.get("/health/deps").json()
        (sandbox,) = [c for c in deps["checks"] if c["name"] == "code_sandbox"]
        assert sandbox["ok"] is True
        chat_id = http.post("/api/v1/chats", json={"title": "sales"}).json()["id"]
        csv_id = _attach(http, chat_id, "sales.csv", "text/csv", CSV)
        _run(http, chat_id, "Here are this year's sales.", [csv_id])
        run_id, events = _run(http, chat_id, _tool_message(ANALYSIS, ["sales.csv"]))
        result = _tool_result(events)
        assert result["error"] is None, result
        assert result["value"] == "{'total': 518.0, 'missing': 1}" and "rows 5" in result["stdout"]
        by_name = {f["filename"]: f for f in result["files"]}
        assert by_name["revenue.png"]["kind"] == "image" and by_name["clean.csv"]["kind"] == "document"

        chart = http.get(f"/api/v1/attachments/{by_name['revenue.png']['id']}/download").json()
        assert (chart["content_type"], chart["disposition"]) == ("image/png", "inline")
        image = httpx.get(chart["url"], timeout=30)
        assert image.status_code == 200 and image.content.startswith(b"\x89PNG\r\n\x1a\n") and len(image.content) > 2000
        table = http.get(f"/api/v1/attachments/{by_name['clean.csv']['id']}/download").json()
        assert table["disposition"] == "attachment"
        assert httpx.get(table["url"], timeout=30).content.startswith(b"month,revenue")

        usage = http.get(f"/api/v1/runs/{run_id}").json()
        assert usage["sandbox_seconds"] > 0
        assert "run_python" in [t["name"] for t in usage["tools"]]

        # The transcript keeps the call and its result (what the chat shows after a reload).
        transcript = json.dumps(http.get(f"/api/v1/chats/{chat_id}/messages").json())
        assert "revenue.png" in transcript


def test_the_session_keeps_variables_within_a_run_and_nothing_between_runs(dev_server: DevServer) -> None:
    with httpx.Client(base_url=dev_server.url, headers=dev_server.auth, timeout=120) as http:
        chat_id = http.post("/api/v1/chats", json={"title": "state"}).json()["id"]
        _run(http, chat_id, _tool_message("secret_value = 41\nopen('left.txt', 'w').write('x')"))
        _, events = _run(http, chat_id, _tool_message("import os\n[os.listdir('.'), 'secret_value' in globals()]"))
        assert _tool_result(events)["value"] == "[[], False]"  # a new run: a new session, nothing survived


def test_an_org_that_turns_it_off_is_not_offered_the_tool(dev_server: DevServer) -> None:
    admin = dev_server.auth_for("admin", "org-admin", org="no-code")
    with httpx.Client(base_url=dev_server.url, headers=admin, timeout=120) as http:
        settings = http.get("/api/v1/admin/settings").json()
        assert settings["code_execution"] is None  # the deployment's default: on for pa dev
        turned = http.put("/api/v1/admin/settings", json={**settings, "code_execution": False})
        assert turned.status_code == 200 and turned.json()["code_execution"] is False
        chat_id = http.post("/api/v1/chats", json={"title": "no code"}).json()["id"]
        run_id, events = _run(http, chat_id, _tool_message("1 + 1"))
        assert not [e for e in events if e["type"] == "TOOL_CALL_START"]
        assert "run_python" not in [t["name"] for t in http.get(f"/api/v1/runs/{run_id}").json()["tools"]]
        asked = http.post(f"/api/v1/chats/{chat_id}/runs", json={"message": "hi", "tools": ["run_python"]})
        assert (asked.status_code, asked.json().get("code")) == (403, "code_execution_disabled"), asked.text
