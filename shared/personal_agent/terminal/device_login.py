"""`pa login` and `pa logout`: the OAuth 2.0 Device Authorization Grant (RFC 8628) against the deployment's issuer.

The endpoints come from the deployment's `/api/v1/config`: its OIDC issuer's discovery document
(`device_authorization_endpoint`, `token_endpoint`, `revocation_endpoint`), or, on `pa dev`, the dev issuer's.
An issuer without the grant (Cognito) gets a clear message: sign in to the web chat and use a personal access
token (`PA_TOKEN`, or `pa login --token`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from personal_agent.terminal import credentials
from personal_agent.terminal.client import ClientError

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
DEV_PREFIX = "/api/v1/dev/device"


@dataclass(frozen=True)
class Endpoints:
    device_authorization: str
    token: str
    revocation: str | None
    client_id: str
    audience: str | None = None


def discover(url: str) -> Endpoints:
    """Where this deployment's issuer takes device codes, tokens and revocations."""
    try:
        config = httpx.get(f"{url}/api/v1/config", timeout=30).raise_for_status().json()
    except httpx.HTTPError as exc:
        raise ClientError(f"cannot read {url}/api/v1/config: {exc}") from exc
    oidc = config.get("oidc")
    if oidc:
        issuer = str(oidc["issuer"]).rstrip("/")
        meta = httpx.get(f"{issuer}/.well-known/openid-configuration", timeout=30).raise_for_status().json()
        if not meta.get("device_authorization_endpoint"):
            raise ClientError(
                f"the identity provider {issuer} does not offer the device grant: sign in to the web chat, create a"
                " personal access token (Settings -> Tokens) and use `pa login --token TOKEN` or PA_TOKEN",
                exit_code=2,
            )
        return Endpoints(
            meta["device_authorization_endpoint"],
            meta["token_endpoint"],
            meta.get("revocation_endpoint"),
            oidc["client_id"],
            oidc.get("audience"),
        )
    if config.get("dev_login"):
        return Endpoints(
            f"{url}{DEV_PREFIX}/authorize", f"{url}{DEV_PREFIX}/token", f"{url}{DEV_PREFIX}/revoke", "pa-cli"
        )
    raise ClientError(f"{url} has no identity provider to sign in with: use a personal access token", exit_code=2)


def _poll(endpoints: Endpoints, device_code: str, interval: float, deadline: float) -> dict[str, object]:
    form = {"grant_type": DEVICE_GRANT, "device_code": device_code, "client_id": endpoints.client_id}
    while time.time() < deadline:
        time.sleep(interval)  # RFC 8628 §3.5: the client waits `interval` seconds between polls
        answer = httpx.post(endpoints.token, data=form, timeout=30)
        if answer.status_code == 200:
            body: dict[str, object] = answer.json()
            return body
        error = (
            answer.json().get("error")
            if answer.headers.get("content-type", "").startswith("application/json")
            else None
        )
        if error == "slow_down":
            interval += 5
        elif error != "authorization_pending":
            raise ClientError(
                f"sign-in failed: {error or answer.status_code}", exit_code=4 if error == "access_denied" else 1
            )
    raise ClientError("the code expired before it was approved: run `pa login` again")


def login(url: str, say: Callable[[str], None]) -> str:
    """Run the device grant for `url`, telling the person where to go; store the tokens; returns where."""
    endpoints = discover(url)
    form = {"client_id": endpoints.client_id, "scope": "openid profile email offline_access"}
    if endpoints.audience:
        form["audience"] = endpoints.audience
    started = httpx.post(endpoints.device_authorization, data=form, timeout=30)
    if started.status_code != 200:
        raise ClientError(f"the issuer refused a device code: {started.text[:300]}")
    grant = started.json()
    say(f"To sign in, open {grant['verification_uri']} and enter the code {grant['user_code']}")
    if grant.get("verification_uri_complete"):
        say(f"(or open {grant['verification_uri_complete']})")
    deadline = time.time() + float(grant.get("expires_in", 600))
    tokens = _poll(endpoints, str(grant["device_code"]), float(grant.get("interval", 5)), deadline)
    stored = credentials.Login(
        access_token=str(tokens["access_token"]),
        expires_at=time.time() + float(str(tokens.get("expires_in", 3600))),
        token_endpoint=endpoints.token,
        refresh_token=str(tokens["refresh_token"]) if tokens.get("refresh_token") else None,
        revocation_endpoint=endpoints.revocation,
        client_id=endpoints.client_id,
    )
    return credentials.save(url, stored)


def logout(url: str) -> bool:
    """Revoke the stored refresh token at the issuer (RFC 7009) and forget the login; False when none was stored."""
    stored = credentials.load(url)
    if stored is None:
        return False
    if stored.revocation_endpoint and stored.refresh_token:
        form = {"token": stored.refresh_token, "token_type_hint": "refresh_token", "client_id": stored.client_id}
        try:
            httpx.post(stored.revocation_endpoint, data=form, timeout=30)
        finally:
            credentials.forget(url)
    credentials.forget(url)
    return True
