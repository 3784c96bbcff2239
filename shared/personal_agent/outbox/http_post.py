"""The checked HTTP POST every outbound message shares (workflow outputs, web push): connected to the URL's checked
address (public internet only, unless `allow` names the host), redirects not followed, every failure a `Sent`."""

from __future__ import annotations

from dataclasses import dataclass

from personal_agent.net.public_address import AddressRefused, checked_address, pinned_request

TIMEOUT_SECONDS = 10.0
_HEADERS = {"User-Agent": "PersonalAgent-outputs/1", "Content-Type": "application/json"}


@dataclass(frozen=True)
class Sent:
    ok: bool
    status_code: int | None = None
    error: str | None = None


async def post_checked(url: str, body: bytes, headers: dict[str, str], allow: frozenset[str]) -> Sent:
    """POST to `url` at its checked address (no redirects); a refusal or a transport error is a failed `Sent`.
    `allow`: the internal hosts it may reach."""
    import httpx

    try:
        parsed = httpx.URL(url)
        address = await checked_address(parsed, allow, verb="called")
        async with httpx.AsyncClient(follow_redirects=False, trust_env=False, timeout=TIMEOUT_SECONDS) as client:
            response = await client.send(pinned_request(client, "POST", parsed, address, {**_HEADERS, **headers}, body))
    except AddressRefused as exc:
        return Sent(False, None, str(exc))
    except httpx.HTTPError as exc:
        return Sent(False, None, f"{type(exc).__name__}: {str(exc)[:200]}".rstrip(": "))
    if 200 <= response.status_code < 300:
        return Sent(True, response.status_code)
    return Sent(False, response.status_code, f"HTTP {response.status_code}: {response.text[:200]}".strip())
