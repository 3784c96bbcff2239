"""Initial-route JavaScript of the web chat, gzipped: what a first visit downloads before it can render.

Reads the chunk graph Vite writes (frontend/dist/.vite/manifest.json): the entry chunk plus its static
imports, then each route's own chunk(s) on top. Target: the initial route under 300 kB gzipped.
Run `make frontend` (or `npm run build` in frontend/) first.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

DIST = Path(__file__).resolve().parents[1] / "frontend" / "dist"
TARGET_KB = 300.0
ROUTES = {
    "/login (first visit)": "src/views/LoginView.vue",
    "/ and /chats/:id (signed in)": "src/views/ChatsView.vue",
    "/usage": "src/views/UsageView.vue",
    "/approvals": "src/views/ApprovalsView.vue",
    "/settings": "src/views/SettingsView.vue",
}


def gz(path: Path) -> int:
    return len(gzip.compress(path.read_bytes(), compresslevel=9))


def closure(manifest: dict[str, dict[str, object]], key: str, seen: set[str] | None = None) -> set[str]:
    """The chunk `key` and everything it imports statically (loaded together with it)."""
    seen = set() if seen is None else seen
    if key in seen:
        return seen
    seen.add(key)
    for dep in manifest[key].get("imports", []):  # type: ignore[union-attr]
        closure(manifest, str(dep), seen)
    return seen


def js_size(manifest: dict[str, dict[str, object]], keys: set[str]) -> tuple[int, int]:
    files = {str(manifest[k]["file"]) for k in keys if str(manifest[k]["file"]).endswith(".js")}
    return sum((DIST / f).stat().st_size for f in files), sum(gz(DIST / f) for f in files)


def main() -> int:
    manifest_path = DIST / ".vite" / "manifest.json"
    if not manifest_path.is_file():
        print(f"no build at {DIST}: run `make frontend` first", file=sys.stderr)
        return 2
    manifest: dict[str, dict[str, object]] = json.loads(manifest_path.read_text())
    entry = next(k for k, v in manifest.items() if v.get("isEntry"))
    shell = closure(manifest, entry)
    raw, packed = js_size(manifest, shell)
    print(f"app shell (entry + static imports): {raw / 1024:7.1f} kB raw  {packed / 1024:6.1f} kB gzipped")
    worst = 0.0
    for route, key in ROUTES.items():
        keys = closure(manifest, key, set(shell))
        raw, packed = js_size(manifest, keys)
        worst = max(worst, packed / 1024)
        print(f"initial JS for {route:30s} {raw / 1024:7.1f} kB raw  {packed / 1024:6.1f} kB gzipped")
    lazy = [k for k in manifest if "oidc" in k]
    for key in lazy:
        raw, packed = js_size(manifest, {key})
        print(f"loaded only with OIDC sign-in ({key}): {packed / 1024:.1f} kB gzipped")
    print(f"largest initial route: {worst:.1f} kB gzipped (target < {TARGET_KB:.0f} kB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
