"""Fakes of the channels' own services on loopback, speaking their wire formats, for tests that drive `pa dev`:
Slack's Web API (what `slack_sdk`'s WebClient posts: form fields with the bot token as a bearer) and Telegram's Bot
API (`/bot{token}/{method}`, what python-telegram-bot posts), each recording the calls it received; and the signed
requests each service sends (Slack's `v0` signature, Telegram's secret-token header). Either can refuse a chosen
method's next call for its rate limit (`limit_once`), as the service does."""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, RedirectResponse

from tests.live_server import LiveServer


def slack_headers(signing_secret: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
    """The headers Slack sends: `X-Slack-Request-Timestamp` and `X-Slack-Signature` (`v0=` HMAC-SHA256 of
    `v0:{timestamp}:{body}` under the signing secret), as its docs say."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(signing_secret.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.changed = threading.Condition()
        self.limits: dict[str, int] = {}

    def limit_once(self, method: str, retry_after: int = 1) -> None:
        """Refuse the next call of `method` for the rate limit, asking to wait `retry_after` seconds (recorded as
        `{method}:429`, the call not made)."""
        with self.changed:
            self.limits[method] = retry_after

    def limited(self, method: str, params: dict[str, Any]) -> int | None:
        with self.changed:
            wait = self.limits.pop(method, None)
        if wait is not None:
            self.record(f"{method}:429", params)
        return wait

    def record(self, method: str, params: dict[str, Any]) -> None:
        with self.changed:
            self.calls.append((method, params))
            self.changed.notify_all()

    def wait_for(self, found: Callable[[list[tuple[str, dict[str, Any]]]], bool], timeout: float = 90) -> None:
        """Block until `found(calls)` holds (the server thread notifies on every call)."""
        with self.changed:
            if not self.changed.wait_for(lambda: found(self.calls), timeout):
                raise AssertionError(f"not seen in {timeout}s; calls: {self.calls}")

    def of(self, method: str) -> list[dict[str, Any]]:
        return [p for m, p in list(self.calls) if m == method]


async def _params(request: Request) -> dict[str, Any]:
    if request.headers.get("content-type", "").startswith("application/json"):
        body: dict[str, Any] = await request.json()
        return body
    return dict((await request.form()).items())


class FakeSlack(_Recorder):
    """`chat.postMessage`, `chat.update`, `views.open` (a trigger id once), `auth.test`: each recorded with its bearer
    token. And the OAuth v2 install: the authorize page (`/oauth/v2/authorize`: the person allows the app, and is
    sent back to `redirect_uri` with a one-time code and the state) and `oauth.v2.access` (the app's client id and
    secret by HTTP Basic, as `slack_sdk` sends them; the code once; the workspace's `xoxb-` bot token)."""

    CLIENT_ID, CLIENT_SECRET, TEAM_ID, BOT_TOKEN = "1111.2222", "fake-client-secret", "TFAKE0001", "xoxb-fake-installed"

    def __init__(self) -> None:
        super().__init__()
        self.ts = itertools.count(1)
        self.codes: dict[str, str] = {}  # a code -> the redirect_uri it was issued for
        self.triggers: set[str] = set()
        app = FastAPI()

        @app.get("/oauth/v2/authorize")
        async def authorize(request: Request) -> RedirectResponse:
            query = dict(request.query_params)
            self.record("oauth/v2/authorize", query)
            code = f"code-{next(self.ts)}"
            self.codes[code] = query["redirect_uri"]
            return RedirectResponse(f"{query['redirect_uri']}?{urlencode({'code': code, 'state': query['state']})}")

        @app.post("/api/oauth.v2.access")
        async def oauth_access(request: Request) -> dict[str, Any]:
            params = await _params(request)
            self.record("oauth.v2.access", params)
            expected = base64.b64encode(f"{self.CLIENT_ID}:{self.CLIENT_SECRET}".encode()).decode()
            if request.headers.get("authorization") != f"Basic {expected}":
                return {"ok": False, "error": "invalid_client_id"}
            if self.codes.pop(str(params.get("code")), None) != params.get("redirect_uri"):
                return {"ok": False, "error": "invalid_code"}
            return {
                "ok": True,
                "access_token": self.BOT_TOKEN,
                "token_type": "bot",
                "scope": "app_mentions:read,chat:write,commands,im:history",
                "bot_user_id": "UBOT0001",
                "app_id": "AFAKE0001",
                "team": {"name": "Fake workspace", "id": self.TEAM_ID},
                "enterprise": None,
                "authed_user": {"id": "UADMIN01"},
                "is_enterprise_install": False,
            }

        @app.post("/api/{method}")
        async def call(method: str, request: Request) -> Any:
            params = await _params(request)
            params["_token"] = request.headers.get("authorization", "").removeprefix("Bearer ")
            if (wait := self.limited(method, params)) is not None:  # Slack's 429: `Retry-After` in seconds
                body = {"ok": False, "error": "ratelimited"}
                return JSONResponse(body, status_code=429, headers={"Retry-After": str(wait)})
            self.record(method, params)
            if method == "chat.postMessage":
                return {"ok": True, "channel": params.get("channel"), "ts": f"1700000000.{next(self.ts):06d}"}
            if method == "chat.update":
                return {"ok": True, "channel": params.get("channel"), "ts": params.get("ts")}
            if method == "views.open":  # a trigger id is good once, for 3 seconds (Slack's `expired_trigger_id`)
                if not params.get("trigger_id") or params["trigger_id"] in self.triggers:
                    return {"ok": False, "error": "expired_trigger_id"}
                self.triggers.add(params["trigger_id"])
                view = params["view"] if isinstance(params["view"], dict) else json.loads(params["view"])
                return {"ok": True, "view": {**view, "id": f"V{next(self.ts)}", "state": {"values": {}}}}
            return {"ok": True}

        self.server = LiveServer(app)

    @property
    def base_url(self) -> str:
        return f"{self.server.url}/api/"

    @property
    def authorize_url(self) -> str:
        return f"{self.server.url}/oauth/v2/authorize"


class FakeTelegram(_Recorder):
    """`getMe`, `sendMessage`, `editMessageText`, `answerCallbackQuery` of one bot."""

    def __init__(self, username: str = "pa_test_bot") -> None:
        super().__init__()
        self.username = username
        self.message_ids = itertools.count(100)
        app = FastAPI()

        @app.post("/bot{token}/{method}")
        async def call(token: str, method: str, request: Request) -> Any:
            params = await _params(request)
            params["_token"] = token
            if (wait := self.limited(method, params)) is not None:  # the Bot API's 429: `parameters.retry_after`
                description = f"Too Many Requests: retry after {wait}"
                body = {"ok": False, "error_code": 429, "description": description, "parameters": {"retry_after": wait}}
                return JSONResponse(body, status_code=429)
            self.record(method, params)
            if method == "getMe":
                bot = {"id": 42, "is_bot": True, "first_name": "PA", "username": self.username}
                return {"ok": True, "result": bot}
            if method in ("sendMessage", "editMessageText"):
                chat_id = int(params["chat_id"])
                message_id = int(params.get("message_id") or next(self.message_ids))
                message = {
                    "message_id": message_id,
                    "date": int(time.time()),
                    "chat": {"id": chat_id, "type": "private"},
                    "text": params.get("text", ""),
                }
                return {"ok": True, "result": message}
            return {"ok": True, "result": True}

        self.server = LiveServer(app)

    @property
    def base_url(self) -> str:
        return self.server.url


@contextmanager
def running_fake_slack() -> Iterator[FakeSlack]:
    fake = FakeSlack()
    fake.server.start()
    try:
        yield fake
    finally:
        fake.server.stop()


@contextmanager
def running_fake_telegram() -> Iterator[FakeTelegram]:
    fake = FakeTelegram()
    fake.server.start()
    try:
        yield fake
    finally:
        fake.server.stop()


def telegram_message(update_id: int, user_id: int, chat_id: int, text: str, chat_type: str = "private") -> bytes:
    """An `Update` with a text message, as the Bot API posts it to a webhook."""
    update = {
        "update_id": update_id,
        "message": {
            "message_id": update_id * 10,
            "date": int(time.time()),
            "from": {"id": user_id, "is_bot": False, "first_name": "Tess", "username": "tess"},
            "chat": {
                "id": chat_id,
                "type": chat_type,
                **({"first_name": "Tess"} if chat_type == "private" else {"title": "Team"}),
            },
            "text": text,
        },
    }
    return json.dumps(update).encode()


def telegram_callback(update_id: int, user_id: int, chat_id: int, data: str) -> bytes:
    """An `Update` with a `callback_query` (an inline keyboard button pressed)."""
    update = {
        "update_id": update_id,
        "callback_query": {
            "id": f"cb{update_id}",
            "from": {"id": user_id, "is_bot": False, "first_name": "Tess", "username": "tess"},
            "chat_instance": "ci1",
            "data": data,
            "message": {
                "message_id": 7,
                "date": int(time.time()),
                "chat": {"id": chat_id, "type": "private", "first_name": "Tess"},
                "text": "waiting",
            },
        },
    }
    return json.dumps(update).encode()
