"""The built-in dev issuer for local mode: its own ES256 key under the data dir, its own JWKS.

Its tokens are ordinary signed JWTs that the app verifies with the same `TokenVerifier` as any
real identity provider's; it is only ever trusted when PA_ENV is `local` or `test`.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from personal_agent.identity.claims import ClaimMapping
from personal_agent.identity.jwks import JwkSet
from personal_agent.settings import Settings

ALGORITHM = "ES256"
# Dev tokens carry a plain `org` claim (string or list) and a `roles` list.
DEV_CLAIMS = ClaimMapping(org_claim="org", roles_claim="roles")


def dev_issuer_enabled(settings: Settings) -> bool:
    """Local and test mode only, and never inside AWS Lambda even if PA_ENV was left at its default."""
    return settings.is_local and "AWS_LAMBDA_FUNCTION_NAME" not in os.environ


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
