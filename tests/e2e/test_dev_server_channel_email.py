"""E-mail in (issue 34) on `pa dev` as a user runs it: raw RFC 822 messages sent with `smtplib` to the SMTP server
`pa dev` starts on loopback (`PA_SMTP_PORT`); the replies read back from the SES emulator `pa dev` sends through. An
unlinked sender gets the connect reply only; once linked, an e-mail runs the agent and the answer is a threaded
reply (`In-Reply-To`, `References`, `Re:`); a reply `approve` to the approval mail's own address (its answer code,
taken from the mail `pa dev` sent) decides the waiting approval, while one in the same thread to the channel's
plain address (a forged `From` could send it) decides nothing; an `ask_user` question is answered by a reply to the
question's mail, checked against its choices."""

from __future__ import annotations

import re
import smtplib
import time
from collections.abc import Iterator
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from typing import Any

import httpx
import pytest

from personal_agent.local.ports import free_port
from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.fake_provider import running_fake_provider, tool_results

ADDRESS, SENDER = "agent@e2e.example.com", "alice@example.com"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevServer, int]]:
    port = free_port()
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev-email"), env_extra={"PA_SMTP_PORT": str(port)}) as server:
        admin = server.auth_for("boss", "org-admin")
        put = httpx.put(f"{server.url}/api/v1/admin/channels/email", json={"address": ADDRESS}, headers=admin)
        assert put.status_code == 200 and put.json()["key"] == ADDRESS, put.text
        yield server, port


def _send(port: int, message_id: str, subject: str, text: str, references: str = "", to: str = ADDRESS) -> None:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = f"Alice <{SENDER}>", to, subject
    message["Message-ID"] = message_id
    if references:
        message["In-Reply-To"], message["References"] = references.split()[-1], references
    message.set_content(text)
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
        smtp.send_message(message)


def _sent(server: DevServer) -> list[EmailMessage]:
    """What `pa dev` sent through the SES emulator, oldest first."""
    data = httpx.get(f"{server.aws_url}/moto-api/data.json", timeout=30).json()
    raws = [m["raw_data"] for m in data.get("ses", {}).get("RawMessage", [])]
    parsed = [BytesParser(policy=policy.default).parsebytes(r.encode()) for r in raws]
    return [m for m in parsed if isinstance(m, EmailMessage)]


def _replies_to(server: DevServer, message_id: str, containing: str, timeout: float = 90) -> list[EmailMessage]:
    deadline = time.monotonic() + timeout
    while True:
        found = [m for m in _sent(server) if m["In-Reply-To"] == message_id and re.search(containing, _body(m))]
        if found:
            return found
        assert time.monotonic() < deadline, [(m["In-Reply-To"], _body(m)[:80]) for m in _sent(server)]
        time.sleep(0.5)  # polling the emulator's outbox: it has no way to wait on


def _body(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    return str(part.get_content()) if part is not None else ""


def _runs(http: httpx.Client, server: DevServer) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = http.get("/api/v1/runs", headers=server.auth).json()["items"]
    return items


@pytest.mark.timeout(300)
def test_an_email_runs_the_agent_and_the_reply_is_threaded(world: tuple[DevServer, int]) -> None:
    server, port = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        _send(port, "<first@example.com>", "Hello", "hello there")
        (connect,) = _replies_to(server, "<first@example.com>", "Connect your account")
        assert connect["To"] == SENDER and connect["Reply-To"] == ADDRESS
        code = re.search(r"\b([A-Z2-9]{8})\b", _body(connect))
        assert code is not None and _runs(http, server) == []  # nothing ran
        linked = http.post("/api/v1/me/channel-links", json={"code": code.group(1)}, headers=server.auth)
        assert linked.status_code == 201 and linked.json()["external_id"] == SENDER, linked.text

        _send(port, "<q1@example.com>", "Time", "what time is it?\n\n> an old quoted line")
        (answer,) = _replies_to(server, "<q1@example.com>", "The time is")
        assert answer["Subject"] == "Re: Time" and "<q1@example.com>" in answer["References"]
        (run,) = _runs(http, server)
        assert run["trigger_source"] == "email" and run["status"] == "succeeded", run

        # A reply in the same thread continues the same chat.
        _send(
            port,
            "<q2@example.com>",
            "Re: Time",
            "what time is it?",
            references="<q1@example.com> " + answer["Message-ID"],
        )
        _replies_to(server, "<q2@example.com>", "The time is")
        assert {r["chat_id"] for r in _runs(http, server)} == {run["chat_id"]}


@pytest.mark.timeout(300)
def test_a_reply_approve_decides_the_waiting_approval(world: tuple[DevServer, int]) -> None:
    server, port = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        if not http.get("/api/v1/me/channel-links", headers=server.auth).json():
            pytest.fail("the first test links the member")
        _send(port, "<act@example.com>", "Please send", "send hello to team@example.com")
        (asked,) = _replies_to(server, "<act@example.com>", "waiting for your approval")
        pending = http.get("/api/v1/approvals", params={"status": "pending"}, headers=server.auth).json()["items"]
        assert len(pending) == 1
        # The approval's mail asks to be answered at an address of its own (its code); the same words sent to the
        # channel's plain address, as anyone writing Alice's From line could, decide nothing.
        reply_to = str(asked["Reply-To"])
        assert reply_to.startswith("agent+") and reply_to.endswith("@e2e.example.com"), reply_to
        references = "<act@example.com> " + asked["Message-ID"]
        _send(port, "<forged@example.com>", "Re: Please send", "approve", references=references)
        (refused,) = _replies_to(server, "<forged@example.com>", "decided nothing")
        assert len(_body(refused)) < 300
        still = http.get("/api/v1/approvals", params={"status": "pending"}, headers=server.auth).json()["items"]
        assert [a["id"] for a in still] == [pending[0]["id"]]

        _send(
            port,
            "<yes@example.com>",
            "Re: Please send",
            "approve\n\nOn Monday someone wrote:\n> quoted",
            references=references,
            to=reply_to,
        )
        _replies_to(server, "<yes@example.com>", "Approved by")
        approved = http.get("/api/v1/approvals", params={"status": "approved"}, headers=server.auth).json()["items"]
        assert pending[0]["id"] in {a["id"] for a in approved}
        _replies_to(server, "<act@example.com>", "queued")  # the rest of the run's answer, in the thread


PIXEL = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
    b"\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82"
)


@pytest.mark.timeout(300)
def test_attachments_become_the_chats_and_refused_ones_are_named(world: tuple[DevServer, int]) -> None:
    server, port = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        if not http.get("/api/v1/me/channel-links", headers=server.auth).json():
            pytest.fail("the first test links the member")
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = f"Alice <{SENDER}>", ADDRESS, "Files"
        message["Message-ID"] = "<files@example.com>"
        message.set_content("what time is it?")
        message.add_attachment(PIXEL, maintype="image", subtype="png", filename="pixel.png")
        message.add_attachment(b"meeting notes\n", maintype="text", subtype="plain", filename="notes.txt")
        # Mailers often send a known type as octet-stream: the name tells it.
        message.add_attachment(b"%PDF-1.4 not really", maintype="application", subtype="octet-stream",
                               filename="evil.exe")  # fmt: skip
        message.add_attachment(b"", maintype="image", subtype="png", filename="empty.png")
        with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
            smtp.send_message(message)

        (refused,) = _replies_to(server, "<files@example.com>", "not taken")
        assert "evil.exe" in _body(refused) and "empty.png" in _body(refused), _body(refused)
        assert "pixel.png" not in _body(refused) and "notes.txt" not in _body(refused)
        # With a document in the chat, the demo model searches the chat's documents first: whether the notes are
        # indexed by then (a passage is quoted) or not yet (none is found) depends on the ingest queue's pace.
        _replies_to(server, "<files@example.com>", "searched your documents|what your documents say")
        run = _runs(http, server)[0]  # the newest
        assert run["trigger_source"] == "email" and run["status"] == "succeeded", run
        messages = http.get(f"/api/v1/chats/{run['chat_id']}/messages", headers=server.auth).json()["items"]
        (user,) = [m for m in messages if m["role"] == "user"]
        files = {f["name"]: f for f in user["attachments"]}
        assert set(files) == {"pixel.png", "notes.txt"}, files
        assert files["pixel.png"]["kind"] == "image" and files["notes.txt"]["kind"] == "document"
        got = http.get(f"/api/v1/attachments/{files['pixel.png']['id']}/download", headers=server.auth)
        assert got.status_code == 200, got.text
        assert httpx.get(got.json()["url"], timeout=30).content == PIXEL


@pytest.mark.timeout(300)
def test_a_member_outside_the_allow_list_is_refused_and_nothing_runs(world: tuple[DevServer, int]) -> None:
    server, port = world
    admin = server.auth_for("boss", "org-admin")
    with httpx.Client(base_url=server.url, timeout=60) as http:
        if not http.get("/api/v1/me/channel-links", headers=server.auth).json():
            pytest.fail("the first test links the member")
        alice = http.get("/api/v1/me", headers=server.auth).json()["user_id"]
        stranger = http.put(
            "/api/v1/admin/channels/email",
            json={"address": ADDRESS, "allow": {"members": ["00000000-0000-4000-8000-000000000000"]}},
            headers=admin,
        )
        assert stranger.status_code == 422 and stranger.json()["code"] == "unknown_member", stranger.text
        admins_only = {"address": ADDRESS, "allow": {"roles": ["org-admin"]}}
        put = http.put("/api/v1/admin/channels/email", json=admins_only, headers=admin)
        assert put.status_code == 200 and put.json()["allow"] == {"roles": ["org-admin"], "members": []}, put.text
        try:
            before = len(_runs(http, server))
            _send(port, "<shut@example.com>", "Time", "what time is it?")
            (refused,) = _replies_to(server, "<shut@example.com>", "not open to you")
            assert len(_body(refused)) < 200
            events = http.get("/api/v1/admin/channels/email/events", headers=admin).json()
            assert next(e for e in events if e["event_id"] == "<shut@example.com>")["status"] == "refused"
            assert len(_runs(http, server)) == before  # nothing ran

            # Allowed by id, she is answered again.
            by_id = {"address": ADDRESS, "allow": {"roles": ["org-admin"], "members": [alice]}}
            assert http.put("/api/v1/admin/channels/email", json=by_id, headers=admin).status_code == 200
            _send(port, "<open@example.com>", "Time", "what time is it?")
            _replies_to(server, "<open@example.com>", "The time is")
            assert len(_runs(http, server)) == before + 1
        finally:
            http.put("/api/v1/admin/channels/email", json={"address": ADDRESS}, headers=admin)


QUESTION = {"question": "Which environment?", "choices": ["staging", "production"]}


def _asking_script(messages: list[dict[str, Any]]) -> dict[str, Any]:
    answers = tool_results(messages)
    if not answers:
        return {"tool_calls": [{"name": "ask_user", "arguments": QUESTION}]}
    return {"content": f"Deploying to {answers[-1]}."}


def _asking_model(http: httpx.Client, admin: dict[str, str], base_url: str) -> None:
    """A scripted OpenAI-compatible model on loopback (it asks `QUESTION`) as the org's, and Alice's default."""
    provider = http.post(
        "/api/v1/admin/providers",
        headers=admin,
        json={"name": "fake", "kind": "openai-compatible", "base_url": base_url, "trust_tier": 2},
    )
    assert provider.status_code == 201, provider.text
    model = http.post(f"/api/v1/admin/providers/{provider.json()['id']}/models", headers=admin, json={"name": "m"})
    assert model.status_code == 201, model.text


def _pending_questions(http: httpx.Client, server: DevServer) -> list[dict[str, Any]]:
    listed = http.get("/api/v1/questions", params={"status": "pending"}, headers=server.auth)
    items: list[dict[str, Any]] = listed.json()["items"]
    return items


@pytest.mark.timeout(300)
def test_a_question_is_answered_by_a_reply_to_its_own_mail(world: tuple[DevServer, int]) -> None:
    server, port = world
    admin = server.auth_for("boss", "org-admin")
    with running_fake_provider(_asking_script) as fake, httpx.Client(base_url=server.url, timeout=60) as http:
        if not http.get("/api/v1/me/channel-links", headers=server.auth).json():
            pytest.fail("the first test links the member")
        _asking_model(http, admin, fake.base_url)
        assert http.put("/api/v1/me/settings", json={"default_model": "fake:m"}, headers=server.auth).status_code == 200
        try:
            _send(port, "<ask@example.com>", "Deploy", "deploy the build")
            (asked,) = _replies_to(server, "<ask@example.com>", r"Which environment\?")
            assert "staging, production" in _body(asked)
            reply_to, references = str(asked["Reply-To"]), "<ask@example.com> " + asked["Message-ID"]
            assert reply_to.startswith("agent+") and reply_to != str(asked["From"]), reply_to

            # To the channel's plain address (anyone can write Alice's From line): no answer.
            _send(port, "<ask-plain@example.com>", "Re: Deploy", "production", references=references)
            _replies_to(server, "<ask-plain@example.com>", "decided nothing")
            # To the question's own address, but not one of its choices: refused with the reason, still pending.
            _send(port, "<ask-qa@example.com>", "Re: Deploy", "qa", references=references, to=reply_to)
            (wrong,) = _replies_to(server, "<ask-qa@example.com>", "does not fit")
            assert len(_body(wrong)) < 300
            assert len(_pending_questions(http, server)) == 1

            _send(port, "<ask-yes@example.com>", "Re: Deploy", "staging", references=references, to=reply_to)
            _replies_to(server, "<ask@example.com>", "Deploying to staging")
            assert _pending_questions(http, server) == []
        finally:
            http.put("/api/v1/me/settings", json={"default_model": None}, headers=server.auth)
