"""The dev server serves the built web chat at `/` with a single-page-app fallback that never shadows the API."""

from __future__ import annotations

from pathlib import Path

import httpx
from fastapi import FastAPI

from personal_agent.api.errors import install_error_handlers
from personal_agent.local.web_chat import mount_web_chat


def _app(dist: Path) -> FastAPI:
    app = FastAPI()
    install_error_handlers(app)
    mount_web_chat(app, dist)

    @app.get("/api/v1/late")  # a route added after the web chat still wins
    async def late() -> dict[str, str]:
        return {"ok": "yes"}

    return app


def _dist(tmp_path: Path) -> Path:
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text('<div id="app"></div>')
    (dist / "assets" / "index-abc123.js").write_text("console.log(1)")
    (tmp_path / "secret.txt").write_text("outside dist")
    return dist


async def _get(app: FastAPI, path: str, method: str = "GET") -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        return await client.request(method, path)


async def test_client_routes_get_index_and_assets_are_immutable(tmp_path: Path) -> None:
    app = _app(_dist(tmp_path))
    for path in ("/", "/chats/123", "/usage", "/settings/"):
        response = await _get(app, path)
        assert response.status_code == 200 and 'id="app"' in response.text, path
        assert response.headers["cache-control"] == "no-cache"
    asset = await _get(app, "/assets/index-abc123.js")
    assert asset.text == "console.log(1)" and "immutable" in asset.headers["cache-control"]


async def test_api_paths_are_never_the_web_chat(tmp_path: Path) -> None:
    app = _app(_dist(tmp_path))
    assert (await _get(app, "/api/v1/late")).json() == {"ok": "yes"}
    for path in ("/api/v1/nope", "/healthz/x", "/.well-known/nope", "/dev-issuer/x", "/openapi.json/x"):
        response = await _get(app, path)
        assert response.status_code == 404 and response.json()["code"] == "not_found", path
    assert (await _get(app, "/chats/1", method="POST")).status_code in (404, 405)


async def test_missing_files_and_escapes_are_404s(tmp_path: Path) -> None:
    app = _app(_dist(tmp_path))
    assert (await _get(app, "/assets/gone-123.js")).status_code == 404
    assert (await _get(app, "/favicon.ico")).status_code == 404
    escaped = await _get(app, "/..%2Fsecret.txt")
    assert "outside dist" not in escaped.text


async def test_an_unbuilt_web_chat_says_how_to_build_it(tmp_path: Path) -> None:
    response = await _get(_app(tmp_path / "nothing"), "/")
    assert response.status_code == 503 and "make frontend" in response.text
