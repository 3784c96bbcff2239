"""The ack time of each channel's inbound endpoint (issue 34), against Slack's 3 s: `pa dev` (the bench's scripted
model) in a child process with fakes of Slack's Web API and Telegram's Bot API on loopback, a linked member, and N
signed requests per channel, each a new conversation whose run then starts after the ack: Slack mentions
(`POST /api/v1/channels/slack/events`), Telegram updates (`POST /api/v1/channels/telegram/{org}`) and e-mails over
SMTP (`PA_SMTP_PORT`: the time `smtplib` waits for the server's `250` after DATA). Printed: p50, p99 and max per
channel. A forged Slack signature's 401 is timed too (it must not be slower than an accepted request).

Run from the repo root: `.venv/bin/python bench/channel_ack.py [--requests 50]`. Figures are printed, never
asserted."""

from __future__ import annotations

import argparse
import json
import re
import smtplib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.dev_process import DevProcess  # noqa: E402
from personal_agent.local.ports import free_port  # noqa: E402
from tests.channel_fakes import (  # noqa: E402
    FakeSlack,
    FakeTelegram,
    running_fake_slack,
    running_fake_telegram,
    slack_headers,
    telegram_message,
)

TEAM, SIGNING, TG_SECRET, ADDRESS = "T0BENCH", "bench-signing-secret", "bench-secret-token", "agent@bench.example"
PA = Path(sys.executable).parent / "pa"


def _admin(dev: DevProcess) -> dict[str, str]:
    args = [str(PA), "token", "--org", "bench", "--user", "boss", "--role", "org-admin"]
    token = subprocess.run(args, cwd=ROOT / "docs", env=dev.env, capture_output=True, text=True, check=True)
    return {"Authorization": f"Bearer {token.stdout.strip().splitlines()[-1]}"}


def _mention(i: int, user: str = "U0BENCH") -> bytes:
    ts = f"1700001000.{i:06d}"
    event = {"type": "app_mention", "user": user, "text": "<@U0BOT> hello", "ts": ts, "channel": "C0BENCH"}
    return json.dumps({"team_id": TEAM, "type": "event_callback", "event_id": f"EvB{i}", "event": event}).encode()


def _slack(http: httpx.Client, body: bytes, secret: str = SIGNING) -> httpx.Response:
    headers = {**slack_headers(secret, body), "Content-Type": "application/json"}
    return http.post("/api/v1/channels/slack/events", content=body, headers=headers)


def _telegram(http: httpx.Client, body: bytes) -> httpx.Response:
    headers = {"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": TG_SECRET}
    return http.post("/api/v1/channels/telegram/bench", content=body, headers=headers)


def _email(port: int, i: int) -> None:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = "member@bench.example", ADDRESS, f"bench {i}"
    message["Message-ID"] = f"<bench-{i}@bench.example>"
    message.set_content("hello")
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
        smtp.send_message(message)


def _code(texts: list[str]) -> str:
    found = re.search(r"\b([A-Z2-9]{8})\b", texts[-1])
    assert found, texts
    return found.group(1)


def _link(http: httpx.Client, member: dict[str, str], slack: FakeSlack, telegram: FakeTelegram) -> None:
    """Link the member's Slack, Telegram and e-mail accounts the way a person does (the code each replies with)."""
    _slack(http, _mention(999999))
    slack.wait_for(lambda calls: any("Connect" in str(p.get("text")) for _, p in calls))
    http.post(
        "/api/v1/me/channel-links",
        json={"code": _code([str(p["text"]) for p in slack.of("chat.postMessage")])},
        headers=member,
    )
    _telegram(http, telegram_message(999999, 7001, 7001, "hello"))
    telegram.wait_for(lambda calls: any("Connect" in str(p.get("text")) for _, p in calls))
    http.post(
        "/api/v1/me/channel-links",
        json={"code": _code([str(p["text"]) for p in telegram.of("sendMessage")])},
        headers=member,
    )
    links = http.get("/api/v1/me/channel-links", headers=member).json()
    assert {link["kind"] for link in links} >= {"slack", "telegram"}, links


def _timed(n: int, send: Callable[[int], object]) -> list[float]:
    samples = []
    for i in range(n):
        start = time.perf_counter()
        send(i)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def _row(name: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    print(f"{name:<48} p50 {statistics.median(ordered):7.1f} ms  p99 {p99:7.1f} ms  max {ordered[-1]:7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=50, help="requests per channel (after 3 warm-ups)")
    args = parser.parse_args()
    smtp = free_port()
    with running_fake_slack() as slack, running_fake_telegram() as telegram, tempfile.TemporaryDirectory() as tmp:
        env = {"PA_SLACK_API_URL": slack.base_url, "PA_TELEGRAM_API_URL": telegram.base_url, "PA_SMTP_PORT": str(smtp)}
        dev = DevProcess("channels", Path(tmp) / "data", env)
        try:
            dev.wait_ready()
            admin, member = _admin(dev), {"Authorization": f"Bearer {dev.tokens(1)[0]}"}
            with httpx.Client(base_url=dev.url, timeout=60) as http:
                for kind, body in (
                    ("slack", {"team_id": TEAM, "bot_token": "xoxb-bench", "signing_secret": SIGNING}),
                    ("telegram", {"bot_token": "1:bench", "secret_token": TG_SECRET}),
                    ("email", {"address": ADDRESS}),
                ):
                    assert http.put(f"/api/v1/admin/channels/{kind}", json=body, headers=admin).status_code == 200
                _link(http, member, slack, telegram)  # e-mail: acked the same whether linked (looked up after the ack)
                n = args.requests
                _timed(3, lambda i: _slack(http, _mention(100000 + i)))
                slack_ms = _timed(n, lambda i: _slack(http, _mention(i)))
                forged_ms = _timed(n, lambda i: _slack(http, _mention(200000 + i), "forged"))
                _timed(3, lambda i: _telegram(http, telegram_message(100000 + i, 7001, 8000 + i, "hello")))
                telegram_ms = _timed(n, lambda i: _telegram(http, telegram_message(i + 1, 7001, 9000 + i, "hello")))
                _timed(3, lambda i: _email(smtp, 100000 + i))
                email_ms = _timed(n, lambda i: _email(smtp, i))
            print(f"{n} requests per channel, each a new conversation (its run starts after the ack); Slack allows 3 s")
            _row("POST /api/v1/channels/slack/events (mention)", slack_ms)
            _row("POST /api/v1/channels/slack/events (forged: 401)", forged_ms)
            _row("POST /api/v1/channels/telegram/{org} (update)", telegram_ms)
            _row("SMTP DATA -> 250 (e-mail in)", email_ms)
        finally:
            dev.stop()


if __name__ == "__main__":
    main()
