"""`pa chat` in a real terminal: tmux at 80x24 runs it against `pa dev` (as users run both); the test types keys and
reads the screen (`tmux capture-pane`): a streamed answer with its tool card, an approval answered inline, Ctrl-C
stopping a run (the run is cancelled on the server) and a second Ctrl-C quitting, and a connection cut in the middle
of an answer (through a proxy the test drops) resumed with no word repeated or missing; with a scripted model (an
OpenAI-compatible fake on loopback) that searches the knowledge base and delegates, the answer's sources under it and
a sub-agent card with its steps, tools and answer; `/new`, `/chats` and `pa chat --chat ID` (the chat's earlier turns
shown, the next answer in it); and an answer's fenced code block drawn as a code block (highlighted, on its own
background) at 80x24."""

from __future__ import annotations

import re
import shlex
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.feed_listener import FeedListener
from tests.e2e.pa_dev import PA, ROOT, DevServer, running_pa_dev
from tests.e2e.tcp_proxy import cuttable_proxy
from tests.e2e.terminal_client import personal_token, scripted_model, wait_for
from tests.fake_provider import last_user_text, running_fake_provider, tool_results

pytestmark = pytest.mark.timeout(300)  # tmux: `make tmux` installs it (a prerequisite of `make test`)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    # The demo model streams one word every 100 ms: an answer takes long enough to stop or cut in its middle.
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev"), env_extra={"PA_DEMO_DELAY_MS": "100"}) as dev:
        yield dev


class Terminal:
    """One tmux session of its own (its own server socket), 80 columns by 24 rows."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, size: tuple[int, int] = (80, 24)) -> None:
        self.socket = f"pa-test-{uuid.uuid4().hex[:8]}"
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        command = " ".join(shlex.quote(a) for a in argv)
        # Without COLUMNS and LINES (pytest's own): the app sizes itself from the terminal, as in a shell.
        shell = (
            f"cd {shlex.quote(str(cwd))} && env -u COLUMNS -u LINES {exports} TERM=xterm-256color {command};"
            " echo EXITED $?; sleep 600"
        )
        self._tmux("new-session", "-d", "-s", "t", "-x", str(size[0]), "-y", str(size[1]), shell)

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True)
        return done.stdout

    def screen(self, escapes: bool = False) -> str:
        """The pane's text (with `escapes`, its colours and attributes as escape sequences too)."""
        return self._tmux("capture-pane", "-p", *(["-e"] if escapes else []), "-t", "t")

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "t", "-l", text)
        self._tmux("send-keys", "-t", "t", "Enter")

    def key(self, key: str) -> None:
        self._tmux("send-keys", "-t", "t", key)

    def wait(self, pattern: str, timeout: float = 60) -> str:
        def matching() -> str | None:
            screen = self.screen()
            return screen if re.search(pattern, screen) else None

        try:
            found: str = wait_for(matching, pattern, timeout)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the screen:\n{self.screen()}") from None
        return found

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def _env(server: DevServer, token: str, url: str | None = None) -> dict[str, str]:
    return {"PA_URL": url or server.url, "PA_TOKEN": token, "PA_CONFIG_DIR": str(Path("/nonexistent"))}


def _chat(server: DevServer, token: str, url: str | None = None, size: tuple[int, int] = (80, 24)) -> Terminal:
    return Terminal([str(PA), "chat"], _env(server, token, url), ROOT / "docs", size)


def _words(screen: str) -> list[str]:
    return " ".join(screen.split()).split(" ")


def test_streamed_answer_approval_and_ctrl_c(server: DevServer) -> None:
    token = personal_token(server, "tess")
    auth = {"Authorization": f"Bearer {token}"}
    term = _chat(server, token)
    try:
        term.wait(r"pa chat · assistant .* ready")
        term.type("what time is it?")
        term.wait(r"⚙ current_time[\s\S]*The time is[\s\S]*─ done")  # one whole frame, not one mid-repaint

        term.type("send hello to bob")
        term.wait(r"Type y to approve, n to deny")
        with httpx.Client(base_url=server.url, headers=auth, timeout=30) as http:
            (pending,) = http.get("/api/v1/approvals").json()["items"]
            term.type("y")
            term.wait(r"Approved: send_demo_message[\s\S]*queued[\s\S]*─ done")
            decided = http.get("/api/v1/approvals", params={"status": "approved"}).json()["items"]
            assert [a["id"] for a in decided] == [pending["id"]]

            message = "please echo " + " ".join(f"w{i}" for i in range(1, 121))
            term.type(message)
            term.wait(r"You said:[\s\S]* w5 ")  # the answer is streaming
            term.key("C-c")
            term.wait(r"Run stopped\.")
            run = http.get("/api/v1/runs", params={"limit": 1}).json()["items"][0]
            assert run["status"] == "cancelled"
        term.key("C-c")  # no run now: quits
        term.wait(r"EXITED 0")
    finally:
        term.close()


def test_a_cut_connection_resumes_without_repeating_text(server: DevServer) -> None:
    token = personal_token(server, "uma")
    port = int(server.url.rsplit(":", 1)[1])
    with cuttable_proxy(port) as proxy:
        term = _chat(server, token, proxy.url, size=(120, 60))  # a wide terminal: the whole answer on one screen
        try:
            term.wait(r"ready")
            words = [f"x{i}" for i in range(1, 41)]  # 4 s at 100 ms a word (the demo echoes 200 characters)
            term.type("please echo " + " ".join(words))
            term.wait(r"You said:[\s\S]* x5 ")
            before = proxy.connections
            proxy.cut()
            screen = term.wait(r"You said:[\s\S]*x40[\s\S]*─ done")
            assert proxy.connections > before  # it reconnected
            shown = _words(screen)
            answer = shown[shown.index("said:") + 1 :]
            # Every word once in the answer (the user's message above it has them too): none repeated, none lost.
            assert [w for w in answer if re.fullmatch(r"x\d+", w)] == words, screen
        finally:
            term.close()


def test_an_ask_user_question_answered_inline_with_the_agent_switched(server: DevServer) -> None:
    admin = server.auth_for("root", "org-admin")
    body = {
        "name": "Asker",
        "slug": "asker",
        "model": "offline:demo",
        "visibility": "org",
        "instructions": "Ask before you act.",
        "tools": ["ask_user", "current_time"],
    }
    created = httpx.post(f"{server.url}/api/v1/agents", json=body, headers=admin, timeout=30)
    assert created.status_code == 201, created.text
    token = personal_token(server, "vic")
    term = _chat(server, token)
    try:
        term.wait(r"ready")
        term.type("/agent asker")
        term.wait(r"pa chat · asker ")
        term.type('/tool ask_user {"question": "Which colour?", "choices": ["red", "blue"]}')
        term.wait(r"Question: Which colour\? \(choose: red, blue\)")
        term.type("blue")
        term.wait(r"Answered: blue[\s\S]*returned[\s\S]*blue[\s\S]*─ done")
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
            run = http.get("/api/v1/runs", params={"limit": 1}).json()["items"][0]
            assert run["agent"]["slug"] == "asker" and run["status"] == "succeeded"
    finally:
        term.close()


def test_attach_a_file_by_path(server: DevServer, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("The launch code word is periwinkle.\n")
    term = _chat(server, personal_token(server, "walt"), size=(120, 60))
    try:
        term.wait(r"ready")
        term.type(f"/attach {notes}")
        term.wait(r"Attached notes\.txt \(sent with your next message\)")
        term.type("what does the attached file say?")
        term.wait(r"⚙ search_knowledge[\s\S]*periwinkle[\s\S]*notes\.txt[\s\S]*─ done")
        term.type("/attach /no/such/file")
        term.wait(r"Error: no such file: /no/such/file")
    finally:
        term.close()


def _searches_and_delegates(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A model that searches the knowledge base for the code word, delegates reading the clock to an explore
    sub-agent (which calls current_time), and answers from each tool's result."""
    asked, answered = last_user_text(messages), messages[-1].get("role") == "tool"
    if "read the clock" in asked:  # the sub-agent's task
        return {"content": "It is time: " + tool_results(messages)[-1][:40]} if answered else _call("current_time", {})
    if "code word" in asked:
        return (
            {"content": "The launch code word is periwinkle [1]."}
            if answered
            else _call("search_knowledge", {"query": "launch code word"})
        )
    if "helper" in asked:
        task = {"task": "read the clock", "preset": "explore"}
        return {"content": "The helper has read the clock."} if answered else _call("delegate", task)
    return {"content": "ok"}


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def _upload(server: DevServer, auth: dict[str, str], filename: str, text: str) -> None:
    data = text.encode()
    body = {"filename": filename, "content_type": "text/markdown", "size": len(data)}
    created = httpx.post(f"{server.url}/api/v1/knowledge/documents", headers=auth, json=body, timeout=30)
    assert created.status_code == 201, created.text
    upload, document = created.json()["upload"], created.json()["document"]
    with FeedListener(server.url, auth) as feed:
        sent = httpx.post(upload["url"], data=upload["fields"], files={"file": (filename, data)}, timeout=30)
        assert sent.status_code == 204, sent.text
        assert feed.until_done(document["id"])["status"] == "ready"


def test_citations_and_sub_agent_progress_from_a_scripted_model(server: DevServer) -> None:
    admin = server.auth_for("root", "org-admin")
    with running_fake_provider(_searches_and_delegates) as fake, httpx.Client(base_url=server.url, timeout=30) as http:
        body = {"name": "scripted", "kind": "openai-compatible", "base_url": fake.base_url, "trust_tier": 2}
        provider = http.post("/api/v1/admin/providers", json=body, headers=admin)
        assert provider.status_code == 201, provider.text
        model = http.post(f"/api/v1/admin/providers/{provider.json()['id']}/models", json={"name": "m"}, headers=admin)
        assert model.status_code == 201, model.text
        token = personal_token(server, "yara")
        _upload(server, {"Authorization": f"Bearer {token}"}, "launch.md", "# Launch\n\nThe code word is periwinkle.\n")
        term = _chat(server, token, size=(120, 60))
        try:
            term.wait(r"ready")
            term.type("/model scripted:m")
            term.wait(r"pa chat · assistant · scripted:m ")
            term.type("what is the code word?")
            # The search's card says what it found; the answer; its sources under it, numbered as the web chat's.
            term.wait(
                r"⚙ search_knowledge[\s\S]*→ 1 passage: launch\.md[\s\S]*periwinkle \[1\]"
                r"[\s\S]*Sources: \[1\] launch\.md, § Launch[\s\S]*─ done"
            )
            term.type("ask a helper")
            # One card for the sub-agent, updated from its events: the task, its two steps and tool, its answer.
            screen = term.wait(
                r"⇢ sub-agent \(explore\): read the clock[\s\S]*succeeded · 2 steps · tools: current_time"
                r"[\s\S]*→ It is time:[\s\S]*The helper has read the clock[\s\S]*─ done"
            )
            assert screen.count("⇢ sub-agent") == 1, screen
            assert screen.count("Sources:") == 1, screen  # listed under the answer that drew on them, once
        finally:
            term.close()
        user = {"Authorization": f"Bearer {token}"}
        run = http.get("/api/v1/runs", params={"limit": 1}, headers=user).json()["items"][0]
        detail = http.get(f"/api/v1/runs/{run['id']}", headers=user).json()
        assert [(c["status"], c["task"]) for c in detail["children"]] == [("succeeded", "read the clock")]


def test_chats_a_new_chat_and_continuing_one(server: DevServer) -> None:
    token = personal_token(server, "zack")
    user = {"Authorization": f"Bearer {token}"}
    term = _chat(server, token)
    try:
        term.wait(r"ready")
        term.type("what time is it, first?")
        term.wait(r"first\?[\s\S]*The time is[\s\S]*─ done")
        term.type("/new")
        term.wait(r"A new chat\.[\s\S]*chat new · ready|chat new · ready[\s\S]*A new chat\.")
        term.type("what time is it, second?")
        term.wait(r"second\?[\s\S]*The time is[\s\S]*─ done")
        with httpx.Client(base_url=server.url, headers=user, timeout=30) as http:
            second, first = http.get("/api/v1/chats").json()["items"]  # newest first: two chats, one a turn each
            for chat, asked in ((first, "what time is it, first?"), (second, "what time is it, second?")):
                items = http.get(f"/api/v1/chats/{chat['id']}/messages").json()["items"]
                assert [i["text"] for i in items if i["role"] == "user"] == [asked]
        term.type("/chats")  # the session's chats, newest first, the one it is in marked
        term.wait(rf"▸ {second['id']}  what time is it, second\?\s+{first['id']}  what time is it, first\?")
        term.type("/quit")
        term.wait(r"EXITED 0")
    finally:
        term.close()

    # `pa chat --chat ID` continues the first chat: its earlier turn shown, the next answer lands in it.
    term = Terminal([str(PA), "chat", "--chat", first["id"]], _env(server, token), ROOT / "docs")
    try:
        term.wait(
            rf"chat {first['id'][:8]} · ready[\s\S]*> what time is it, first\?[\s\S]*⚙ current_time[\s\S]*The time is"
        )
        term.wait(r"The time is[\s\S]*─ the chat so far \(\d+ items\); continue it below")
        term.type("what time is it, third?")
        term.wait(r"third\?[\s\S]*The time is[\s\S]*─ done")
        with httpx.Client(base_url=server.url, headers=user, timeout=30) as http:
            items = http.get(f"/api/v1/chats/{first['id']}/messages").json()["items"]
            turns = [i["text"] for i in items if i["role"] == "user"]
            assert turns == ["what time is it, first?", "what time is it, third?"]
            assert len(http.get("/api/v1/chats").json()["items"]) == 2  # no new chat
    finally:
        term.close()
    # A chat that is not there (or not the caller's): one line and exit 2, before any screen.
    missing = subprocess.run(
        [str(PA), "chat", "--chat", str(uuid.uuid4())],
        cwd=ROOT / "docs",
        env={**server.env, **_env(server, token)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and "chat_not_found" in missing.stderr, missing.stderr


CODE_ANSWER = "Here is the function:\n\n```python\ndef double(x):\n    return x * 2\n```\n\nCall it with a number."
_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def _colours(line: str) -> tuple[str, list[tuple[str, str]]]:
    """A captured line (`capture-pane -e`) as its text and each character's (foreground, background)."""
    text, colours, fg, bg, at = "", [], "", "", 0
    for match in [*_SGR.finditer(line), None]:
        end = match.start() if match else len(line)
        text += line[at:end]
        colours += [(fg, bg)] * (end - at)
        if match is None:
            break
        at = match.end()
        params = match.group(1).split(";")
        i = 0
        while i < len(params):
            p = params[i]
            if p in ("", "0"):
                fg = bg = ""
            elif p in ("38", "48"):
                width = 3 if params[i + 1] == "5" else 5
                value = ";".join(params[i : i + width])
                fg, bg = (value, bg) if p == "38" else (fg, value)
                i += width - 1
            elif p == "39" or p == "49":
                fg, bg = ("", bg) if p == "39" else (fg, "")
            elif p.isdigit() and (30 <= int(p) <= 37 or 90 <= int(p) <= 97):
                fg = p
            elif p.isdigit() and (40 <= int(p) <= 47 or 100 <= int(p) <= 107):
                bg = p
            i += 1
    return text, colours


def _colour_of(lines: list[str], word: str) -> tuple[str, str]:
    for line in lines:
        text, colours = _colours(line)
        if word in text:
            return colours[text.index(word)]
    raise AssertionError(f"{word!r} is not on the screen")


def test_a_code_block_is_rendered_as_one(server: DevServer) -> None:
    with running_fake_provider(lambda messages: {"content": CODE_ANSWER}) as fake:
        model = scripted_model(server, fake.base_url, "coder")
        term = _chat(server, personal_token(server, "xena"))  # 80x24
        try:
            term.wait(r"ready")
            term.type(f"/model {model}")
            term.wait(rf"pa chat · assistant · {model} ")
            term.type("show me a function")
            screen = term.wait(r"Call it with a number\.[\s\S]*─ done")
            coloured = term.screen(escapes=True).splitlines()
        finally:
            term.close()
    # Markdown, not its source: no fence, no info string; the code keeps its indentation.
    assert "```" not in screen and not re.search(r"^\W*python\W*$", screen, re.M), screen
    lines = screen.splitlines()
    (head,) = [line for line in lines if "def double(x):" in line]
    (body,) = [line for line in lines if "return x * 2" in line]
    assert body.index("return") - head.index("def") == 4, screen
    # A code block: on a background of its own, highlighted (the keyword and the name in different colours).
    assert _colour_of(coloured, "def double")[1] != _colour_of(coloured, "Here is the function")[1]
    assert _colour_of(coloured, "def ")[0] != _colour_of(coloured, "double(")[0]
