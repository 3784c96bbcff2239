"""The dev issuer's OAuth 2.0 Device Authorization Grant (RFC 8628), for `pa login` against `pa dev`.

A terminal asks for a device code and a short user code; a person signed in to the web chat enters the user code
(`/device`) and approves it; the terminal, polling the token endpoint, then gets a dev-issuer access token for
that person's subject, org and roles, and a refresh token. Refresh tokens rotate on use and are revoked by
`pa logout` (RFC 7009). The state lives in this process only: a restarted `pa dev` forgets pending codes and
refresh tokens (a dev server, one process), and the person signs in again.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field

# No vowels or look-alikes (RFC 8628 §6.1): BCDF-GHJK.
_USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ"
DEVICE_CODE_TTL_SECONDS = 600
REFRESH_TTL_SECONDS = 30 * 24 * 3600


@dataclass(frozen=True)
class Grantee:
    """Whom an approved code stands for: the approving person's subject, org and roles."""

    subject: str
    org: str
    roles: tuple[str, ...]


@dataclass
class _Pending:
    device_code: str
    user_code: str
    client_id: str
    expires_at: float
    interval: int
    status: str = "pending"  # pending, approved, denied, used
    grantee: Grantee | None = None
    last_poll: float = 0.0


@dataclass
class _Refresh:
    grantee: Grantee
    client_id: str
    expires_at: float


@dataclass
class TokenOutcome:
    """What a poll of the token endpoint answers: an OAuth `error` or the grantee to mint tokens for."""

    error: str | None = None
    grantee: Grantee | None = None
    client_id: str = ""


def normalize_user_code(code: str) -> str:
    """`bcdf-ghjk`, `BCDFGHJK`, ` bcdf ghjk ` -> `BCDF-GHJK` (people type codes loosely)."""
    letters = "".join(c for c in code.upper() if c.isalnum())
    return f"{letters[:4]}-{letters[4:]}" if len(letters) == 8 else letters


@dataclass
class DeviceGrants:
    """The pending device codes and live refresh tokens of this process."""

    interval: int = 1
    _pending: dict[str, _Pending] = field(default_factory=dict)
    _by_user_code: dict[str, str] = field(default_factory=dict)
    _refresh: dict[str, _Refresh] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, client_id: str) -> _Pending:
        """A new device code and user code, pending until a person approves or denies it."""
        with self._lock:
            self._expire(time.time())
            user_code = normalize_user_code("".join(secrets.choice(_USER_CODE_ALPHABET) for _ in range(8)))
            pending = _Pending(
                device_code=secrets.token_urlsafe(32),
                user_code=user_code,
                client_id=client_id,
                expires_at=time.time() + DEVICE_CODE_TTL_SECONDS,
                interval=self.interval,
            )
            self._pending[pending.device_code] = pending
            self._by_user_code[user_code] = pending.device_code
            return pending

    def decide(self, user_code: str, grantee: Grantee, *, approve: bool) -> bool:
        """Approve (for `grantee`) or deny a pending user code; False when there is no such pending code."""
        with self._lock:
            self._expire(time.time())
            device_code = self._by_user_code.get(normalize_user_code(user_code))
            pending = self._pending.get(device_code or "")
            if pending is None or pending.status != "pending":
                return False
            pending.status = "approved" if approve else "denied"
            pending.grantee = grantee if approve else None
            return True

    def poll(self, device_code: str) -> TokenOutcome:
        """The token endpoint's answer to a poll (RFC 8628 §3.5): pending, slow_down, denied, expired, or granted
        (once: the code is spent)."""
        now = time.time()
        with self._lock:
            pending = self._pending.get(device_code)
            if pending is None or pending.expires_at < now or pending.status == "used":
                return TokenOutcome(error="expired_token" if pending else "invalid_grant")
            if pending.status == "denied":
                return TokenOutcome(error="access_denied")
            if pending.status == "pending":
                too_soon = now - pending.last_poll < pending.interval * 0.5
                pending.last_poll = now
                return TokenOutcome(error="slow_down" if too_soon else "authorization_pending")
            pending.status = "used"
            return TokenOutcome(grantee=pending.grantee, client_id=pending.client_id)

    def issue_refresh(self, grantee: Grantee, client_id: str) -> str:
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._refresh[token] = _Refresh(grantee, client_id, time.time() + REFRESH_TTL_SECONDS)
        return token

    def redeem_refresh(self, token: str) -> _Refresh | None:
        """The grant behind a refresh token, which is spent (rotation): the caller issues a new one."""
        with self._lock:
            grant = self._refresh.pop(token, None)
        return grant if grant is not None and grant.expires_at > time.time() else None

    def revoke(self, token: str) -> None:
        with self._lock:
            self._refresh.pop(token, None)

    def _expire(self, now: float) -> None:
        for code, pending in list(self._pending.items()):
            if pending.expires_at < now:
                del self._pending[code]
                self._by_user_code.pop(pending.user_code, None)


GRANTS = DeviceGrants()
