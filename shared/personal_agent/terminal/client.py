"""The deployment's API over HTTP: which deployment (`--url` / `PA_URL`), which credential (`--token` /
`PA_TOKEN`, which win, else the stored `pa login`, refreshed when it is about to expire), and the calls."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

import httpx

from personal_agent.terminal import credentials

DEFAULT_URL = "http://127.0.0.1:8000"


class ClientError(Exception):
    """A failure to show the user (no traceback); `exit_code` is what `pa` exits with."""

    def __init__(self, message: str, *, exit_code: int = 1, code: str | None = None) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.code = code


def resolve_url(explicit: str | None) -> str:
    return (explicit or os.environ.get("PA_URL") or DEFAULT_URL).rstrip("/")


def refresh_login(url: str, login: credentials.Login) -> credentials.Login:
    """A new access token from the refresh token (rotated: the new one is stored)."""
    if not login.refresh_token:
        raise ClientError("your login expired: run `pa login` again", exit_code=2)
    form = {"grant_type": "refresh_token", "refresh_token": login.refresh_token, "client_id": login.client_id}
    answer = httpx.post(login.token_endpoint, data=form, timeout=30)
    if answer.status_code != 200:
        credentials.forget(url)
        raise ClientError("your login expired or was revoked: run `pa login` again", exit_code=2)
    body = answer.json()
    login.access_token = body["access_token"]
    login.expires_at = time.time() + float(body.get("expires_in", 3600))
    login.refresh_token = body.get("refresh_token", login.refresh_token)
    credentials.save(url, login)
    return login


def resolve_token(url: str, explicit: str | None) -> str:
    token = explicit or os.environ.get("PA_TOKEN")
    if token:
        return token
    login = credentials.load(url)
    if login is None:
        raise ClientError(f"not signed in to {url}: run `pa login --url {url}` or set PA_TOKEN", exit_code=2)
    if login.expires_at - time.time() < 60:
        login = refresh_login(url, login)
    return login.access_token


def error_of(response: httpx.Response) -> tuple[str | None, str]:
    """The API's stable error `code` and message of a failed response."""
    try:
        body = response.json()
    except ValueError:
        return None, response.text[:300] or f"HTTP {response.status_code}"
    if not isinstance(body, dict):
        return None, str(body)[:300]
    code = body.get("code")
    return (str(code) if code else None), str(body.get("message") or body.get("error_description") or body)[:300]


@dataclass
class Api:
    url: str
    token: str
    timeout: float = 60.0

    from_login: bool = False  # the token is a stored `pa login`'s: a 401 refreshes it once

    @classmethod
    def connect(cls, url: str | None, token: str | None) -> Api:
        base = resolve_url(url)
        explicit = token or os.environ.get("PA_TOKEN")
        return cls(base, resolve_token(base, token), from_login=not explicit)

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=self.headers, timeout=self.timeout)

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            with self.http() as http:
                return http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise ClientError(f"cannot reach {self.url}: {exc}") from exc

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """One API call; a failure raises ClientError with the API's message (budget refusals exit 3)."""
        response = self._send(method, path, **kwargs)
        if response.status_code == 401 and self.from_login:
            login = credentials.load(self.url)
            if login is not None:  # expired early or revoked: refresh once (or say to sign in again)
                self.token = refresh_login(self.url, login).access_token
                response = self._send(method, path, **kwargs)
        if response.status_code >= 400:
            code, message = error_of(response)
            exit_code = 3 if code == "budget_exceeded" else 2 if response.status_code in (400, 401, 404, 422) else 1
            raise ClientError(
                f"{message} ({response.status_code} {code or ''})".strip(), exit_code=exit_code, code=code
            )
        return response.json() if response.content else None
