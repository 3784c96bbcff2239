"""The knowledge base in a real browser (Debian's headless Chromium) against a `pa dev` stack of its own.

A Markdown file made here is uploaded on the Knowledge page (a progress bar while it goes straight to the moto
bucket through its presigned POST), follows `uploading → ready` live (the ingest queue's poller runs the ingest
function in-process and the status arrives on the feed), is found by the page's search and re-indexed; in a chat,
the agent's `search_knowledge` call (the offline demo model's `/tool` command) puts the cited passage under the
answer, where it opens in full — also after a reload, from the stored transcript. The page passes axe.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.web_browser import PHONE, assert_fits, open_page
from tests.e2e.web_chat_stack import (
    DevStack,
    describe_violations,
    screenshot,
    serious_violations,
)
from tests.e2e.web_chat_steps import UUID_PATH

pytestmark = pytest.mark.timeout(240)
FACT = "The Zephyr valve must be recalibrated every ninety days by a certified technician."
MARKDOWN = f"# Maintenance\n\n{FACT}\n\n# Warranty\n\nThe warranty covers parts for two years.\n".encode()

# Remembers every upload progress bar the page shows (it may be gone by the time the test looks).
WATCH_PROGRESS = """() => {
  window.__progress = [];
  new MutationObserver(() => {
    for (const bar of document.querySelectorAll('progress')) {
      const label = bar.labels && bar.labels[0] ? bar.labels[0].textContent.trim() : '';
      window.__progress.push(label);
    }
  }).observe(document.body, { childList: true, subtree: true, attributes: true });
}"""


def assert_accessible(page: Any) -> None:
    violations = serious_violations(page)
    assert not violations, describe_violations(violations)


def test_a_document_uploaded_on_the_knowledge_page_is_cited_in_a_chat(page: Any) -> None:
    from playwright.sync_api import expect

    page.goto("/")
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_test_id("who")).to_contain_text("acme")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Knowledge").click()
    expect(page.get_by_role("heading", name="Knowledge", level=1)).to_be_visible()
    expect(page.get_by_test_id("no-documents")).to_be_visible()
    assert_accessible(page)

    # Upload: the row appears at once, a progress bar shows while the file goes to the bucket, then it is ready.
    page.evaluate(WATCH_PROGRESS)
    page.get_by_label("File").set_input_files({"name": "zephyr.md", "mimeType": "text/markdown", "buffer": MARKDOWN})
    page.get_by_label("Classification").select_option("confidential")
    page.get_by_role("button", name="Upload", exact=True).click()
    row = page.get_by_test_id("document").filter(has_text="zephyr.md")
    expect(row).to_have_attribute("data-status", "ready")  # announced on the feed after the ingest ran
    expect(row.get_by_test_id("document-status")).to_have_text("Ready")
    expect(row).to_contain_text("confidential")
    expect(row).to_contain_text("Organisation")
    assert "Uploading zephyr.md" in page.evaluate("window.__progress")
    expect(page.get_by_role("status").filter(has_text="zephyr.md uploaded")).to_have_count(1)
    screenshot(page, "knowledge-ready")
    assert_accessible(page)

    # The page's search finds it by a paraphrase; its passage opens in full.
    page.get_by_role("searchbox", name="Search the documents").fill("how often is the valve recalibrated")
    page.get_by_role("button", name="Search", exact=True).click()
    result = page.get_by_test_id("search-result").first
    expect(result).to_contain_text("zephyr.md, § Maintenance")
    result.get_by_role("button").click()
    dialog = page.get_by_role("dialog", name="zephyr.md, § Maintenance")
    expect(dialog.get_by_test_id("passage-text")).to_contain_text(FACT)
    assert_accessible(page)
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()

    # Re-index goes through the pipeline again and comes back ready.
    # (The pipeline may finish before the page shows `processing`: wait on the request, then on `ready`.)
    with page.expect_response(lambda r: r.url.endswith("/reindex") and r.request.method == "POST") as reindexed:
        row.get_by_role("button", name="Re-index zephyr.md").click()
    assert reindexed.value.status == 202, reindexed.value.text()
    expect(row).to_have_attribute("data-status", "ready")

    # In a chat, the agent's search cites the passage under its answer; the citation opens the source.
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Chats").click()
    page.get_by_role("button", name="New chat", exact=True).click()  # the landing composer: saved on first send
    command = "/tool search_knowledge " + json.dumps({"query": "Zephyr valve recalibrated"})
    page.get_by_role("textbox", name="Message").fill(command)
    page.get_by_role("button", name="Send", exact=True).click()
    page.wait_for_url(UUID_PATH)
    answer = page.get_by_test_id("assistant-message").filter(has_text="search_knowledge")
    citation = answer.get_by_test_id("citation").filter(has_text="zephyr.md, § Maintenance")
    expect(citation).to_have_count(1)
    citation.click()
    dialog = page.get_by_role("dialog", name="zephyr.md, § Maintenance")
    expect(dialog.get_by_test_id("passage-text")).to_contain_text(FACT)
    expect(dialog.get_by_test_id("passage-source")).to_contain_text("zephyr.md · § Maintenance")
    screenshot(page, "knowledge-citation")
    assert_accessible(page)
    dialog.get_by_role("button", name="Close").click()

    page.reload()  # the stored transcript keeps the citation
    answer = page.get_by_test_id("assistant-message").filter(has_text="search_knowledge")
    expect(answer.get_by_test_id("citation").filter(has_text="zephyr.md, § Maintenance")).to_have_count(1)

    # Delete removes it from the list (and from search).
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Knowledge").click()
    row = page.get_by_test_id("document").filter(has_text="zephyr.md")
    row.get_by_role("button", name="Delete zephyr.md").click()
    expect(row).to_have_count(0)
    page.get_by_role("searchbox", name="Search the documents").fill("Zephyr valve")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.get_by_test_id("no-results")).to_be_visible()


def test_a_document_that_cannot_be_read_shows_why(page: Any) -> None:
    from playwright.sync_api import expect

    page.goto("/knowledge")
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_role("heading", name="Knowledge", level=1)).to_be_visible()
    page.get_by_label("File").set_input_files(
        {"name": "broken.pdf", "mimeType": "application/pdf", "buffer": b"%PDF-1.7 this is not really a PDF"}
    )
    page.get_by_label("Who can search it").select_option("personal")
    page.get_by_role("button", name="Upload", exact=True).click()
    row = page.get_by_test_id("document").filter(has_text="broken.pdf")
    expect(row).to_have_attribute("data-status", "failed")
    expect(row.get_by_test_id("document-status")).to_have_text("Failed")
    expect(row).to_contain_text("Only me")
    expect(row.get_by_test_id("document-error")).not_to_be_empty()
    assert_accessible(page)


def test_the_knowledge_page_fits_a_phone(browser: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    with open_page(browser, web.url, PHONE) as phone:
        phone.goto("/knowledge")
        phone.get_by_role("button", name="Sign in", exact=True).click()
        expect(phone.get_by_test_id("document").first).to_be_visible()  # the list the other tests left
        assert_fits(phone, "knowledge-phone")
