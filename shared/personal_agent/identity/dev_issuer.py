"""The built-in dev issuer for local mode: its own ES256 key under the data dir, its own JWKS.

Its tokens are ordinary signed JWTs that the app verifies with the same `TokenVerifier` as any
real identity provider's; it is only ever trusted when PA_ENV is `local` or `test` (the default is
`local`), outside Lambda, and while the server is bound to loopback (PA_HOST) unless
PA_DEV_LOGIN_ALLOW_REMOTE says otherwise.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from personal_agent.identity.claims import ClaimMapping
from personal_agent.identity.jwks import JwkSet
from personal_agent.settings import Settings

ALGORITHM = "ES256"
_HOST_HEADER = re.compile(r"^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$")
# Dev tokens carry a plain `org` claim (string or list) and a `roles` list.
DEV_CLAIMS = ClaimMapping(org_claim="org", roles_claim="roles")


def is_loopback(host: str) -> bool:
    """`localhost` or a loopback address (`127.0.0.1`, `::1`, `[::1]`)."""
    name = host.strip().lower().removeprefix("[").removesuffix("]")
    if name == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1 on a dual-stack socket
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def split_host(header: str) -> tuple[str, int | None] | None:
    """A Host header as (name, port): `[::1]:8000` -> (`[::1]`, 8000), `localhost` -> (`localhost`, None);
    None when it is not a host name or bracketed IPv6 address with an optional numeric port."""
    match = _HOST_HEADER.match(header.strip().lower())
    if match is None:
        return None
    return match.group(1), int(match.group(2)) if match.group(2) else None


def dev_mode(settings: Settings) -> bool:
    """Local and test mode, never inside AWS Lambda even if PA_ENV was left at its default: the dev
    issuer's routes exist (they may still refuse, see `dev_issuer_refusal`)."""
    return settings.is_local and "AWS_LAMBDA_FUNCTION_NAME" not in os.environ


def dev_issuer_refusal(settings: Settings) -> str | None:
    """Why the dev issuer is not trusted in this process, or None when it is."""
    if not dev_mode(settings):
        return "the dev issuer exists only in local mode (PA_ENV=local), never on AWS"
    if not is_loopback(settings.host) and not settings.dev_login_allow_remote:
        return (
            "dev login is off because the server does not listen on loopback only (PA_HOST): anyone who"
            " reaches it could sign in as anyone. Use PA_HOST=127.0.0.1, an identity provider (PA_OIDC_ISSUER),"
            " or PA_DEV_LOGIN_ALLOW_REMOTE=true on a network you trust"
        )
    return None


def dev_issuer_enabled(settings: Settings) -> bool:
    """The dev issuer is trusted: dev mode, and the server bound to loopback (or remote use allowed)."""
    return dev_issuer_refusal(settings) is None


class DevIssuer:
    """Signs dev tokens with the newest key in `<data_dir>/dev-issuer/keys.json`, creating it on first use."""

    def __init__(self, directory: Path, issuer: str, audience: str) -> None:
        self.directory = directory
        self.issuer = issuer
        self.audience = audience

    @classmethod
    def from_settings(cls, settings: Settings) -> DevIssuer:
        return cls(Path(settings.data_dir).resolve() / "dev-issuer", settings.dev_issuer, settings.oidc_audience)

    @property
    def keys_path(self) -> Path:
        return self.directory / "keys.json"

    def _private_keys(self) -> list[dict[str, Any]]:
        try:
            keys: list[dict[str, Any]] = json.loads(self.keys_path.read_text())["keys"]
        except FileNotFoundError:
            self._write(self._new_key(), exclusive=True)
            keys = json.loads(self.keys_path.read_text())["keys"]
        return keys

    def public_jwks(self) -> JwkSet:
        """The published key set: every key still accepted, newest last, private parts stripped."""
        return JwkSet.from_json({"keys": self._private_keys()})

    def rotate(self) -> str:
        """Add a new signing key (older ones stay published so their tokens keep verifying); return its kid."""
        key = self._new_key()
        self._write(key, exclusive=False)
        return str(key["kid"])

    def mint(
        self,
        *,
        subject: str,
        orgs: Sequence[str],
        roles: Sequence[str] = ("user",),
        ttl_seconds: int = 3600,
        email: str | None = None,
        name: str | None = None,
    ) -> str:
        """A signed access token for `subject` granting `orgs` (first is the default) and `roles`."""
        from joserfc import jwt
        from joserfc.jwk import ECKey

        jwk = self._private_keys()[-1]
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "aud": self.audience,
            "sub": subject,
            "iat": now,
            "nbf": now,
            "exp": now + ttl_seconds,
            "jti": uuid.uuid4().hex,
            "org": list(orgs) if len(orgs) != 1 else orgs[0],
            "roles": list(roles),
        }
        if email:
            claims["email"] = email
        if name:
            claims["name"] = name
        header = {"alg": ALGORITHM, "kid": jwk["kid"], "typ": "JWT"}
        return jwt.encode(header, claims, ECKey.import_key(jwk), algorithms=[ALGORITHM])

    @staticmethod
    def _new_key() -> dict[str, Any]:
        from joserfc.jwk import ECKey

        kid = f"dev-{uuid.uuid4().hex[:12]}"
        key = ECKey.generate_key("P-256", parameters={"kid": kid, "use": "sig", "alg": ALGORITHM}, private=True)
        return dict(key.as_dict(private=True))

    def _write(self, key: dict[str, Any], *, exclusive: bool) -> None:
        """Write the key file atomically; `exclusive` creates it only if no other process did first."""
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        existing = [] if exclusive else self._private_keys()
        tmp = self.directory / f".keys.{uuid.uuid4().hex}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump({"keys": [*existing, key]}, f)
        if not exclusive:
            os.replace(tmp, self.keys_path)
            return
        try:
            os.link(tmp, self.keys_path)  # fails if another process created the file meanwhile: theirs wins
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
