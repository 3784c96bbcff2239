"""The Knowledge page's search filters in a real browser against a `pa dev` stack of its own (issue 36, item 5:
"search filters by collection, document, date and type"): two documents that both answer a question, then the
same question narrowed to one type, to one document, and to documents changed since tomorrow (none). The page
passes axe with the filters shown."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest

from tests.e2e.web_chat_stack import describe_violations, serious_violations

pytestmark = pytest.mark.timeout(240)
NOTE = b"# Parking\n\nVisitors park in the east garage, level two, after signing in at the desk.\n"
TABLE = b"place,rule\neast garage,visitors park on level two after signing in\n"


def _upload(page: Any, name: str, mime: str, data: bytes) -> None:
    from playwright.sync_api import expect

    page.get_by_label("File").set_input_files({"name": name, "mimeType": mime, "buffer": data})
    page.get_by_role("button", name="Upload", exact=True).click()
    expect(page.get_by_test_id("document").filter(has_text=name)).to_have_attribute("data-status", "ready")


def _found(page: Any) -> list[str]:
    """The documents of the results shown once the search's answer came (none: the "Nothing found" note)."""
    from playwright.sync_api import expect

    with page.expect_response(lambda r: "/knowledge/search?" in r.url) as answered:
        page.get_by_role("button", name="Search", exact=True).click()
    assert answered.value.status == 200, answered.value.text()
    results, nothing = page.get_by_test_id("search-result"), page.get_by_test_id("no-results")
    expect(results.first.or_(nothing)).to_be_visible()
    return sorted({text.split(",")[0].strip() for text in results.get_by_role("button").all_inner_texts()})


def test_the_search_narrows_to_a_type_a_document_and_a_date(page: Any) -> None:
    from playwright.sync_api import expect

    page.goto("/")
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_test_id("who")).to_contain_text("acme")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Knowledge").click()
    _upload(page, "parking.md", "text/markdown", NOTE)
    _upload(page, "places.csv", "text/csv", TABLE)

    page.get_by_role("searchbox", name="Search the documents").fill("where do visitors park")
    assert _found(page) == ["parking.md", "places.csv"]
    page.get_by_label("Type", exact=True).select_option(label="CSV")
    assert _found(page) == ["places.csv"]
    page.get_by_label("Type", exact=True).select_option(label="Any type")
    page.get_by_label("Document", exact=True).select_option(label="parking.md")
    assert _found(page) == ["parking.md"]
    page.get_by_label("Document", exact=True).select_option(label="Any document")
    page.get_by_label("Changed since").fill((date.today() + timedelta(days=2)).isoformat())
    assert _found(page) == []
    page.get_by_label("Changed since").fill(date.today().isoformat())
    assert _found(page) == ["parking.md", "places.csv"]
    violations = serious_violations(page)
    assert not violations, describe_violations(violations)
