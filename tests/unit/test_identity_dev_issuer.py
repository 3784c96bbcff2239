"""The dev issuer's key file: private, created once even by racing processes, rotated without losing old keys."""

from __future__ import annotations

import base64
import json
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from personal_agent.identity.dev_issuer import DevIssuer


def _issuer(tmp_path: Path) -> DevIssuer:
    return DevIssuer(tmp_path / "dev-issuer", "urn:test:dev", "personal-agent")


def test_the_key_file_is_private_and_the_jwks_public(tmp_path: Path) -> None:
    issuer = _issuer(tmp_path)
    jwks = issuer.public_jwks()
    assert len(jwks.keys) == 1 and "d" not in jwks.keys[0] and jwks.keys[0]["alg"] == "ES256"
    assert stat.S_IMODE(issuer.keys_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(issuer.directory.stat().st_mode) == 0o700


def test_racing_first_uses_agree_on_one_key(tmp_path: Path) -> None:
    with ThreadPoolExecutor(8) as pool:
        kids = set(pool.map(lambda _: _issuer(tmp_path).public_jwks().keys[0]["kid"], range(16)))
    assert len(kids) == 1
    assert not list((tmp_path / "dev-issuer").glob(".keys.*.tmp"))


def test_rotation_signs_with_the_new_key_and_keeps_the_old_one(tmp_path: Path) -> None:
    issuer = _issuer(tmp_path)
    old = issuer.public_jwks().keys[0]["kid"]
    new = issuer.rotate()
    assert [k["kid"] for k in issuer.public_jwks().keys] == [old, new]
    token = issuer.mint(subject="alice", orgs=["acme", "globex"], roles=["user"])
    header = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
    assert header == {"alg": "ES256", "kid": new, "typ": "JWT"}
