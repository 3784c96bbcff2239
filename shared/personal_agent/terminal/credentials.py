"""Where `pa login` keeps a deployment's tokens: the OS keyring (`keyring`) when there is one, else a JSON file
readable only by the user (`$PA_CONFIG_DIR` or `~/.config/personal-agent/credentials.json`, mode 0600)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

SERVICE = "personal-agent"


@dataclass
class Login:
    """A stored login: the tokens and where to refresh and revoke them."""

    access_token: str
    expires_at: float
    token_endpoint: str
    refresh_token: str | None = None
    revocation_endpoint: str | None = None
    client_id: str = "pa-cli"


def config_dir() -> Path:
    explicit = os.environ.get("PA_CONFIG_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "personal-agent"


def _keyring() -> Any | None:
    """The keyring module when it has a usable backend (not the `fail` or `null` one)."""
    if os.environ.get("PA_KEYRING", "").lower() in {"0", "off", "false", "no"}:
        return None
    try:
        import keyring
        from keyring.backends import fail

        backend = keyring.get_keyring()
        if isinstance(backend, fail.Keyring) or type(backend).__module__.endswith("null"):
            return None
        return keyring
    except Exception:
        return None


def _file() -> Path:
    return config_dir() / "credentials.json"


def _read_file() -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads(_file().read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    return data


def _write_file(data: dict[str, Any]) -> None:
    path = _file()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(data, f)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def save(url: str, login: Login) -> str:
    """Store `login` for `url`; returns where (`keyring` or the file's path)."""
    ring = _keyring()
    if ring is not None:
        try:
            ring.set_password(SERVICE, url, json.dumps(asdict(login)))
            return "keyring"
        except Exception:
            pass
    data = _read_file()
    data[url] = asdict(login)
    _write_file(data)
    return str(_file())


def load(url: str) -> Login | None:
    ring = _keyring()
    raw: Any = None
    if ring is not None:
        try:
            stored = ring.get_password(SERVICE, url)
            raw = json.loads(stored) if stored else None
        except Exception:
            raw = None
    if raw is None:
        raw = _read_file().get(url)
    return Login(**raw) if isinstance(raw, dict) else None


def forget(url: str) -> None:
    ring = _keyring()
    if ring is not None:
        try:
            ring.delete_password(SERVICE, url)
        except Exception:
            pass
    data = _read_file()
    if url in data:
        del data[url]
        _write_file(data)
