"""A citation opens its document (issue 36, item 6), in a real browser (Debian's headless Chromium) against a `pa dev`
stack of its own: a two-page PDF uploaded on the Knowledge page is cited in a chat; the citation of its second page
opens the passage, and "Open the document" opens the PDF itself in a new tab — the URL the API signed for its key on
the documents bucket, with `#page=2` for the browser's PDF viewer. The dialog passes axe."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.web_chat_stack import describe_violations, serious_violations
from tests.e2e.web_chat_steps import UUID_PATH
from tests.knowledge import make_pdf

pytestmark = pytest.mark.timeout(240)
FIRST = "Chapter one. The Zephyr pump is delivered with its inlet sealed."
SECOND = "Chapter two. The Zephyr valve must be recalibrated every ninety days by a certified technician."


def _upload_pdf(page: Any) -> str:
    """Upload the two-page PDF on the Knowledge page; its document id once the page shows it ready."""
    from playwright.sync_api import expect

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Knowledge").click()
    expect(page.get_by_role("heading", name="Knowledge", level=1)).to_be_visible()
    pdf = {"name": "manual.pdf", "mimeType": "application/pdf", "buffer": make_pdf([FIRST, SECOND])}
    page.get_by_label("File").set_input_files(pdf)
    registered = "/api/v1/knowledge/documents"
    with page.expect_response(lambda r: r.url.endswith(registered) and r.request.method == "POST") as created:
        page.get_by_role("button", name="Upload", exact=True).click()
    assert created.value.status == 201, created.value.text()
    row = page.get_by_test_id("document").filter(has_text="manual.pdf")
    expect(row).to_have_attribute("data-status", "ready")
    return str(created.value.json()["document"]["id"])


def test_a_citation_opens_its_pdf_at_the_cited_page(page: Any) -> None:
    from playwright.sync_api import expect

    page.goto("/")
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_test_id("who")).to_contain_text("acme")
    document_id = _upload_pdf(page)

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Chats").click()
    page.get_by_role("button", name="New chat", exact=True).click()
    command = "/tool search_knowledge " + json.dumps({"query": "how often is the valve recalibrated"})
    page.get_by_role("textbox", name="Message").fill(command)
    page.get_by_role("button", name="Send", exact=True).click()
    page.wait_for_url(UUID_PATH)
    answer = page.get_by_test_id("assistant-message").filter(has_text="search_knowledge")
    citation = answer.get_by_test_id("citation").filter(has_text="manual.pdf, p. 2")
    expect(citation).to_have_count(1)
    citation.click()
    dialog = page.get_by_role("dialog", name="manual.pdf, p. 2")
    expect(dialog.get_by_test_id("passage-text")).to_contain_text("recalibrated every ninety days")
    violations = serious_violations(page)
    assert not violations, describe_violations(violations)

    signed = f"/api/v1/knowledge/documents/{document_id}/download"
    with page.expect_response(lambda r: r.url.endswith(signed)) as link, page.context.expect_page() as opened:
        dialog.get_by_role("button", name="Open the document").click()
    assert link.value.status == 200, link.value.text()
    url = link.value.json()["url"]
    assert "documents/" in url and f"/{document_id}/manual.pdf?" in url  # the document's key on the bucket
    tab = opened.value
    tab.wait_for_url(lambda u: u != "about:blank")
    assert tab.url == f"{url}#page=2"
    expect(dialog.get_by_test_id("document-opened")).to_have_text("manual.pdf opened in a new tab at page 2.")
    violations = serious_violations(page)
    assert not violations, describe_violations(violations)
    tab.close()
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()
