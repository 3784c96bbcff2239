"""The dev issuer's device grant state (RFC 8628) and the terminal client's credential file, without a server."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from personal_agent.identity.dev_device_grant import DeviceGrants, Grantee, normalize_user_code
from personal_agent.terminal import credentials

ALICE = Grantee(subject="alice", org="acme", roles=("user",))


def test_user_codes_are_normalised_and_have_no_vowels() -> None:
    assert normalize_user_code(" bcdf ghjk ") == "BCDF-GHJK"
    assert normalize_user_code("bcdfghjk") == "BCDF-GHJK"
    code = DeviceGrants().start("pa-cli").user_code
    assert len(code) == 9 and code[4] == "-" and not set(code) & set("AEIOUY01")


def test_a_code_is_pending_then_granted_once() -> None:
    grants = DeviceGrants(interval=0)
    pending = grants.start("pa-cli")
    assert grants.poll(pending.device_code).error == "authorization_pending"
    assert grants.decide(pending.user_code.lower(), ALICE, approve=True)
    assert not grants.decide(pending.user_code, ALICE, approve=True)  # decided once
    granted = grants.poll(pending.device_code)
    assert granted.error is None and granted.grantee == ALICE
    assert grants.poll(pending.device_code).error == "expired_token"  # spent
    assert grants.poll("no-such-code").error == "invalid_grant"


def test_polling_faster_than_the_interval_is_told_to_slow_down() -> None:
    grants = DeviceGrants(interval=60)
    pending = grants.start("pa-cli")
    assert grants.poll(pending.device_code).error == "authorization_pending"
    assert grants.poll(pending.device_code).error == "slow_down"


def test_a_denied_code_and_refresh_rotation_and_revocation() -> None:
    grants = DeviceGrants(interval=0)
    pending = grants.start("pa-cli")
    assert grants.decide(pending.user_code, ALICE, approve=False)
    assert grants.poll(pending.device_code).error == "access_denied"
    token = grants.issue_refresh(ALICE, "pa-cli")
    grant = grants.redeem_refresh(token)
    assert grant is not None and grant.grantee == ALICE
    assert grants.redeem_refresh(token) is None  # rotated: spent on use
    other = grants.issue_refresh(ALICE, "pa-cli")
    grants.revoke(other)
    assert grants.redeem_refresh(other) is None


def test_without_a_keyring_the_login_is_a_file_only_the_user_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PA_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    login = credentials.Login("access", 1e12, "http://issuer/token", refresh_token="refresh")
    where = credentials.save("http://a", login)
    assert where == str(tmp_path / "cfg" / "credentials.json")
    assert stat.S_IMODE(Path(where).stat().st_mode) == 0o600
    assert credentials.load("http://a") == login and credentials.load("http://b") is None
    credentials.forget("http://a")
    assert credentials.load("http://a") is None
