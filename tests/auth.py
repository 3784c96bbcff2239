"""Bearer tokens for tests, minted by the dev issuer (the same key and verification path as `pa dev`)."""

from __future__ import annotations

from typing import Any

from personal_agent.identity.dev_issuer import DevIssuer
from personal_agent.settings import get_settings


def dev_issuer() -> DevIssuer:
    """The dev issuer of the test session (its key lives under the session's PA_DATA_DIR)."""
    return DevIssuer.from_settings(get_settings())


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def auth_headers(tenant: Any, roles: tuple[str, ...] = ("user",), org_slug: str | None = None) -> dict[str, str]:
    """`Authorization` for `tenant`'s user acting in its org (or `org_slug`) with `roles`."""
    token = dev_issuer().mint(subject=tenant.subject, orgs=[org_slug or tenant.slug], roles=roles)
    return bearer(token)


class TestIdentityProvider:
    """A stand-in OIDC provider: its own signing keys, and a real HTTP endpoint serving its JWKS.

    `publish` decides which public keys the endpoint serves, so a test can rotate keys; `requests`
    counts JWKS fetches (the discovery document is served too, at the issuer's well-known path).
    """

    __test__ = False  # not a test class, despite the name

    def __init__(self) -> None:
        import http.server
        import json
        import threading

        self.keys: dict[str, Any] = {}
        self.published: list[str] = []
        self.jwks_requests = 0
        self.failing = False
        provider = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                if provider.failing:
                    self.send_error(503)
                    return
                if self.path == "/.well-known/openid-configuration":
                    body = {"issuer": provider.issuer, "jwks_uri": provider.jwks_url}
                elif self.path == "/jwks":
                    provider.jwks_requests += 1
                    body = {"keys": [provider.keys[k].as_dict(private=False) for k in provider.published]}
                else:
                    self.send_error(404)
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.issuer = self.base_url
        self.jwks_url = f"{self.base_url}/jwks"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def new_key(self, alg: str = "RS256", kid: str | None = None, publish: bool = True) -> str:
        """Generate a signing key (RS256 or ES256); publish its public half unless told not to."""
        import uuid

        from joserfc.jwk import ECKey, RSAKey

        kid = kid or f"{alg.lower()}-{uuid.uuid4().hex[:8]}"
        params = {"kid": kid, "use": "sig", "alg": alg}
        key: Any = (
            RSAKey.generate_key(2048, parameters=params, private=True)
            if alg == "RS256"
            else ECKey.generate_key("P-256", parameters=params, private=True)
        )
        self.keys[kid] = key
        if publish:
            self.published.append(kid)
        return kid

    def sign(self, claims: dict[str, Any], kid: str, header: dict[str, Any] | None = None) -> str:
        from joserfc import jwt

        key = self.keys[kid]
        alg = key.as_dict()["alg"]
        return jwt.encode({"alg": alg, "kid": kid, **(header or {})}, claims, key, algorithms=[alg])

    def claims(self, subject: str, audience: str = "personal-agent", **extra: Any) -> dict[str, Any]:
        """Valid claims for `subject` issued now, lasting ten minutes; `extra` adds or overrides."""
        import time

        now = int(time.time())
        return {"iss": self.issuer, "aud": audience, "sub": subject, "iat": now, "nbf": now, "exp": now + 600, **extra}
