"""`web_fetch` and `web_search`: internal addresses are refused after DNS and after every redirect, pages come
back as bounded text, and search is offered only with a provider. Nothing here leaves the machine: the pages are
served on loopback, which `web_fetch` reaches only through its admin allow-list."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic_ai import ModelRetry
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from personal_agent.errors import InvalidInput
from personal_agent.lifecycle.launch_snapshot import snapshot_tools
from personal_agent.settings import get_settings
from personal_agent.tools import web
from personal_agent.tools.registry import default_tool_names, get_tool
from tests.live_server import LiveServer

PAGE = """<html><head><title>Release notes</title><script>var secret = "do not show";</script>
<style>p { color: red }</style></head><body><nav>Home | About</nav><h1>Version 2</h1>
<p>Faster &amp; smaller.</p><ul><li>One</li><li>Two</li></ul></body></html>"""


class Site:
    """A small web site on loopback that counts the requests it answers."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        self.server = LiveServer(Starlette(routes=[Route("/{path:path}", self.page)]))

    async def page(self, request: Request) -> Response:
        path = request.url.path
        self.hits.append(path)
        if path == "/redirect":
            return RedirectResponse(request.query_params["to"], status_code=302)
        if path == "/big":  # more than 1 MB of script before the only visible text
            return HTMLResponse("<script>" + "x" * 1_200_000 + "</script><p>TAIL-TEXT</p>")
        if path == "/long":
            return PlainTextResponse("word " * 10_000)
        if path == "/search":
            query = request.query_params["q"]
            assert request.query_params["format"] == "json"
            results = [{"title": f"About {query}", "url": "https://example.org/a", "content": "Snippet A"}]
            return JSONResponse({"results": results})
        return HTMLResponse(PAGE)

    @property
    def allow(self) -> frozenset[str]:
        return frozenset({f"127.0.0.1:{self.server.port}"})


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    running = Site()
    running.server.start()
    yield running
    running.server.stop()


def refused_targets(port: int) -> list[str]:
    return [
        f"http://127.0.0.1:{port}/",
        f"http://[::1]:{port}/",
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/",
        "http://[::ffff:127.0.0.1]/",
        f"http://localhost:{port}/",  # a name that resolves to loopback
    ]


async def test_internal_addresses_are_refused_without_the_allow_list(site: Site) -> None:
    for url in refused_targets(site.server.port):
        site.hits.clear()
        with pytest.raises(ModelRetry, match="not a public internet address"):
            await web.fetch_text(url)
        assert site.hits == [], url  # refused before connecting


async def test_an_allow_listed_loopback_page_comes_back_as_readable_text(site: Site) -> None:
    text = await web.fetch_text(f"http://127.0.0.1:{site.server.port}/notes", site.allow)
    assert text.startswith("# Release notes")
    assert "Version 2" in text and "Faster & smaller." in text and "One\nTwo" in text
    assert "secret" not in text and "color" not in text and "Home | About" not in text


async def test_a_redirect_to_an_internal_address_is_refused(site: Site) -> None:
    # The allow-list names this server's exact host:port, so a redirect elsewhere on loopback is refused too.
    targets = [*refused_targets(site.server.port)[1:], f"http://127.0.0.1:{site.server.port + 1}/"]
    for target in targets:
        site.hits.clear()
        with pytest.raises(ModelRetry, match="not a public internet address"):
            await web.fetch_text(f"http://127.0.0.1:{site.server.port}/redirect?to={target}", site.allow)
        assert site.hits == ["/redirect"], target


async def test_a_redirect_within_the_allowed_host_is_followed(site: Site) -> None:
    text = await web.fetch_text(f"http://127.0.0.1:{site.server.port}/redirect?to=/notes", site.allow)
    assert "Version 2" in text


async def test_reads_and_answers_are_bounded(site: Site) -> None:
    big = await web.fetch_text(f"http://127.0.0.1:{site.server.port}/big", site.allow)
    assert "TAIL-TEXT" not in big and big.endswith("[truncated]")  # reading stopped at 1 MB
    long = await web.fetch_text(f"http://127.0.0.1:{site.server.port}/long", site.allow)
    assert len(long) <= web.MAX_CHARS + len("\n\n[truncated]") and long.endswith("[truncated]")


@pytest.mark.parametrize(
    ("url", "allow"),
    [
        ("file:///etc/passwd", frozenset[str]()),
        ("ftp://example.org/x", frozenset[str]()),
        ("http://169.254.169.254/", frozenset({"169.254.169.254"})),  # the allow-list never opens metadata
        ("http://" + "a" * 3000 + ".org/", frozenset[str]()),
        ("http:///no-host", frozenset[str]()),
    ],
)
async def test_bad_urls_are_model_retries(url: str, allow: frozenset[str]) -> None:
    with pytest.raises(ModelRetry):
        await web.fetch_text(url, allow)


def test_web_fetch_is_an_untrusted_read_only_default_tool() -> None:
    tool = get_tool("web_fetch")
    assert tool is not None and tool.untrusted and not tool.acts
    assert "web_fetch" in default_tool_names()
    (ref,) = snapshot_tools(("web_fetch",))
    assert ref.untrusted and not ref.acts


def test_web_search_is_not_offered_without_a_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(get_settings(), "web_search_url", None)
    assert get_tool("web_search") is None and "web_search" not in default_tool_names()
    with pytest.raises(InvalidInput) as refused:
        snapshot_tools(("web_search",))
    assert refused.value.code == "unknown_tool"


async def test_web_search_asks_the_configured_provider(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    endpoint = f"http://127.0.0.1:{site.server.port}/search"
    monkeypatch.setattr(get_settings(), "web_search_url", endpoint)
    assert "web_search" in default_tool_names()
    (ref,) = snapshot_tools(("web_search",))
    assert ref.untrusted and not ref.acts
    text = await web.search(endpoint, "pydantic ai")
    assert text == "1. About pydantic ai\n   https://example.org/a\n   Snippet A"
    with pytest.raises(ModelRetry):
        await web.search(endpoint, "  ")


def test_html_to_text_keeps_blocks_and_drops_chrome() -> None:
    text: Any = web.html_to_text("<div>a<br>b</div><footer>legal</footer><p>c  d</p>")
    assert text == "a\nb\nc d"
