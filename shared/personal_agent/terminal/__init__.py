"""The terminal client: `pa login`, `pa logout`, `pa run`, `pa runs`, `pa chat`. It talks HTTP to a deployment's API
only (httpx); nothing server-side is imported here, so it installs and runs on its own."""
