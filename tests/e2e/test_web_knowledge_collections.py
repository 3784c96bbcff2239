"""Named collections and sources on the Knowledge page, in a real browser against a `pa dev` stack of its own:
an admin creates "HR policies" with a colleague as reader, uploads a file into it (picked in the upload form),
finds it by a search of that collection; a member who is not in the org is refused with the reason; a sitemap on
loopback (allow-listed for the address checks) is added as the collection's source and its last sync shows the
page added, then "Sync now" shows it unchanged. Through the API, the reader finds the passage and a colleague who
is not a member gets 404. The page passes axe at each step."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.loopback_site import Site
from tests.e2e.web_chat_stack import DevStack, describe_violations, screenshot, serious_violations

pytestmark = pytest.mark.timeout(300)
FACT = "Parental leave lasts twenty weeks, paid in full, under the pelican clause."
PAGE = "<html><head><title>Benefits</title></head><body><p>The gym allowance is forty euros a month.</p></body></html>"


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    served = Site({"/benefits.html": PAGE})
    server = served.serve()
    served.sitemap.append(f"http://127.0.0.1:{served.port}/benefits.html")
    try:
        yield served
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def web_env(site: Site) -> dict[str, str]:
    return {"PA_DEMO_DELAY_MS": "0", "PA_WEB_FETCH_ALLOW_HOSTS": f"127.0.0.1:{site.port}"}


def assert_accessible(page: Any) -> None:
    violations = serious_violations(page)
    assert not violations, describe_violations(violations)


def _user_id(web: DevStack, user: str) -> tuple[str, str]:
    token = web.token(user=user, role="user")
    with web.api(token) as http:
        return str(http.get("/api/v1/me").json()["user_id"]), token


def test_a_collection_is_made_fed_and_searched_on_the_knowledge_page(page: Any, web: DevStack, site: Site) -> None:
    from playwright.sync_api import expect

    bob, bob_token = _user_id(web, "bob")
    _, carol_token = _user_id(web, "carol")
    page.goto("/")
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_test_id("who")).to_contain_text("acme")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Knowledge").click()
    expect(page.get_by_test_id("no-collections")).to_be_visible()
    assert_accessible(page)

    page.get_by_label("Collection name").fill("HR policies")
    page.get_by_label("Readers (may search)").fill(bob)
    page.get_by_role("button", name="Create collection").click()
    collection = page.get_by_test_id("collection").filter(has_text="HR policies")
    expect(collection).to_contain_text("Owner")
    expect(collection).to_contain_text("1 reader(s)")
    collection_id = collection.get_attribute("data-id")

    # Upload into the collection, picked in the upload form.
    page.get_by_label("File").set_input_files(
        {"name": "leave.md", "mimeType": "text/markdown", "buffer": f"# Leave\n\n{FACT}\n".encode()}
    )
    page.get_by_label("Who can search it").select_option(label="Collection: HR policies")
    page.get_by_role("button", name="Upload", exact=True).click()
    row = page.get_by_test_id("document").filter(has_text="leave.md")
    expect(row).to_have_attribute("data-status", "ready")
    expect(row).to_contain_text("HR policies")

    page.get_by_role("searchbox", name="Search the documents").fill("how long is parental leave")
    page.get_by_label("Search in").select_option(label="HR policies")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.get_by_test_id("search-result").first).to_contain_text("leave.md")

    # Members: someone who is not in the org is refused, with the reason.
    collection.get_by_role("button", name="Members of HR policies").click()
    page.get_by_test_id("members-form").get_by_label("Writers").fill("nobody@example.test")
    page.get_by_role("button", name="Save members").click()
    expect(page.get_by_test_id("collections-error")).to_contain_text("is not a member of the organisation")
    assert_accessible(page)

    # A sitemap feeds the collection; its last sync says what it did; "Sync now" finds it unchanged.
    page.get_by_label("Kind").select_option("sitemap")
    page.get_by_label("Into collection").select_option(label="HR policies")
    page.get_by_label("Sitemap URL").fill(f"http://127.0.0.1:{site.port}/sitemap.xml")
    page.get_by_role("button", name="Add source").click()
    source = page.get_by_test_id("source").filter(has_text="sitemap.xml")
    expect(source.get_by_test_id("last-sync")).to_contain_text("1 added", timeout=60_000)
    expect(page.get_by_test_id("document").filter(has_text="benefits.html")).to_be_visible(timeout=60_000)
    source.get_by_role("button", name=f"Sync http://127.0.0.1:{site.port}/sitemap.xml now").click()
    expect(source.get_by_test_id("last-sync")).to_contain_text("0 added, 0 updated, 0 removed", timeout=60_000)
    screenshot(page, "knowledge-collections")
    assert_accessible(page)

    # The reader finds the passage through the API; a colleague who is not a member gets 404.
    params = {"q": "parental leave weeks", "collection": collection_id}
    with web.api(bob_token) as http:
        found = http.get("/api/v1/knowledge/search", params=params)
        assert found.status_code == 200 and any("pelican clause" in p["text"] for p in found.json()["items"])
    with web.api(carol_token) as http:
        refused = http.get("/api/v1/knowledge/search", params=params)
        assert (refused.status_code, refused.json()["code"]) == (404, "collection_not_found")
