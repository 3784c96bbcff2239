"""Port checks that turn a taken port into one clear line instead of a traceback."""

from __future__ import annotations

import socket
from urllib.parse import urlparse

from personal_agent.errors import ConfigurationError


def free_port(host: str = "127.0.0.1") -> int:
    """A port the OS says is free right now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def ensure_port_free(host: str, port: int, what: str, env_var: str) -> None:
    """Raise a ConfigurationError naming the port and the variable that moves it when it is taken."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            raise ConfigurationError(
                f"{what}: port {port} on {host} is already in use; stop what holds it or set {env_var}=<another port>"
            ) from None


def ensure_reachable(url: str, what: str, env_var: str, timeout: float = 2.0) -> None:
    """Raise a ConfigurationError when a configured service's host:port does not accept connections."""
    parsed = urlparse(url)
    host = parsed.hostname
    if not host:  # unix socket URLs are checked by connecting with the client
        return
    port = parsed.port or {
        "postgresql": 5432,
        "postgres": 5432,
        "redis": 6379,
        "rediss": 6379,
        "https": 443,
        "http": 80,
    }.get(parsed.scheme, 0)
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        raise ConfigurationError(
            f"{what} at {host}:{port} (from {env_var}) is unreachable ({exc.strerror or exc}); "
            f"start it or unset {env_var} to use the embedded one"
        ) from None
