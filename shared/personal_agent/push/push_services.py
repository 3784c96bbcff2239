"""Which push services a browser subscription may name: a Web Push endpoint is a URL the server POSTs to, so it is
limited to the browser vendors' push services (FCM for Chrome/Edge/Android, Mozilla autopush, Apple, Windows push)
plus the hosts the operator adds (`PA_PUSH_ALLOW_HOSTS`: `host`, `host:port`, or `.domain` for its subdomains).
Plain http only to a `host:port` the operator listed (a test's push service on loopback)."""

from __future__ import annotations

from urllib.parse import urlsplit

from personal_agent.net.public_address import parse_allow_hosts
from personal_agent.settings import get_settings

VENDOR_HOSTS = frozenset(
    {
        "fcm.googleapis.com",  # Chrome, Edge on Android, Opera, Samsung Internet
        "updates.push.services.mozilla.com",  # Firefox (autopush)
        ".push.apple.com",  # Safari (web.push.apple.com)
        ".notify.windows.com",  # Edge and legacy Windows push (wns2-*.notify.windows.com)
    }
)


def operator_hosts() -> frozenset[str]:
    """The hosts the operator added; their addresses may also be internal (the same rule as outputs)."""
    return parse_allow_hosts(get_settings().push_allow_hosts)


def _listed(host: str, port: int, entries: frozenset[str]) -> bool:
    return any(
        entry in (host, f"{host}:{port}") or (entry.startswith(".") and host.endswith(entry)) for entry in entries
    )


def refusal(endpoint: str) -> str | None:
    """Why a push may not be sent to `endpoint` (None: it may)."""
    try:
        parts = urlsplit(endpoint.strip())
        host, port = (parts.hostname or "").lower(), parts.port
    except ValueError:
        return "the endpoint must be an https URL"
    if not host or parts.scheme not in ("https", "http"):
        return "the endpoint must be an https URL"
    if parts.scheme == "http":
        listed_port = port is not None and f"{host}:{port}" in operator_hosts()
        return None if listed_port else "the endpoint must be an https URL"
    if not _listed(host, port or 443, VENDOR_HOSTS | operator_hosts()):
        return "the endpoint must be a browser push service's (FCM, Mozilla, Apple or Windows push)"
    return None
