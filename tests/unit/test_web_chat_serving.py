"""The dev server serves the built web chat at `/` with a single-page-app fallback that never shadows the API."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from personal_agent.api.errors import install_error_handlers
from personal_agent.errors import ConfigurationError
from personal_agent.local.web_chat import WebChat, mount_web_chat, web_chat_headers
from personal_agent.settings import Settings


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


def _csp(response: httpx.Response) -> dict[str, str]:
    policy = response.headers["content-security-policy"]
    return dict(directive.strip().split(" ", 1) for directive in policy.split(";"))


async def test_every_page_and_asset_carries_the_content_security_policy(tmp_path: Path) -> None:
    app = _app(_dist(tmp_path))
    for path in ("/", "/chats/123", "/assets/index-abc123.js"):
        response = await _get(app, path)
        csp = _csp(response)
        # Model output cannot load images or scripts from elsewhere, nor send anything anywhere but here.
        assert csp["default-src"] == "'none'" and csp["img-src"] == "'self'" and csp["script-src"] == "'self'"
        assert csp["connect-src"].split()[0] == "'self'" and "*" not in csp["connect-src"]
        assert csp["frame-ancestors"] == "'none'" and csp["base-uri"] == "'none'"
        assert response.headers["x-dns-prefetch-control"] == "off", path
        assert response.headers["x-content-type-options"] == "nosniff"
    assert "content-security-policy" in (await _get(_app(tmp_path / "nothing"), "/")).headers
    assert "content-security-policy" not in (await _get(app, "/api/v1/late")).headers  # the API is not a page


async def test_the_csp_lets_the_app_reach_its_identity_provider(tmp_path: Path) -> None:
    settings = Settings(
        oidc_issuer="https://idp.example.test/realms/acme",
        web_connect_sources="https://auth.example.test, https://auth2.example.test:8443",
        aws_endpoint_url=None,  # not whatever endpoint an earlier test left in the environment
    )
    app = FastAPI()
    app.router.default = WebChat(_dist(tmp_path), app.router.default, web_chat_headers(settings))
    connect = _csp(await _get(app, "/"))["connect-src"].split()
    assert connect == [
        "'self'",
        "https://idp.example.test",
        "https://auth.example.test",
        "https://auth2.example.test:8443",
    ]
    # Locally, presigned uploads go from the browser straight to the emulator's S3.
    local = web_chat_headers(Settings(environment="local", aws_endpoint_url="http://127.0.0.1:5055/"))
    assert "http://127.0.0.1:5055" in local["Content-Security-Policy"].split("connect-src", 1)[1].split(";")[0].split()
    for bad in ("https://x.test; script-src *", "*", "'unsafe-inline'", "https://x.test/path"):
        with pytest.raises(ConfigurationError, match="PA_WEB_CONNECT_SOURCES"):
            web_chat_headers(Settings(web_connect_sources=bad))
