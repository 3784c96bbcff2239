"""What the user saw live is what the transcript keeps (issue 30, item 1), in a real browser against a `pa dev` stack:
one chat whose runs search an uploaded document (citations), call a tool that fails, ask for two approvals (one
approved with a reason, one denied with a reason, reloaded while it waits) and delegate to a sub-agent. At the end
of the last run the
transcript's DOM is read, the page reloaded and the DOM read again: they must be the same, item for item, in the same
order — approvals right after the tool call they held, the sub-agent after its `delegate` call, all of it before
the answer that followed. Only volatile bits are normalised (clock times, the ids Vue generates per page load)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.web_chat_stack import ROOT, DevStack, describe_violations, serious_violations
from tests.e2e.web_chat_steps import new_chat, send, sign_in

pytestmark = pytest.mark.timeout(420)
SCREENSHOTS = ROOT / "docs" / "screenshots"
FACT = "The Zephyr valve must be recalibrated every ninety days by a certified technician."
MARKDOWN = f"# Maintenance\n\n{FACT}\n\n# Warranty\n\nThe warranty covers parts for two years.\n".encode()

# The transcript as markup, with what differs between two loads of the same page made equal: ids Vue generates
# (`useId`: numbered per page load) renumbered by first appearance, attributes in name order.
TRANSCRIPT_HTML = """() => {
  const log = document.querySelector('[data-testid="transcript"]');
  const clone = log.cloneNode(true);
  const ids = new Map();
  const rename = (v) => { if (!ids.has(v)) ids.set(v, `id${ids.size}`); return ids.get(v); };
  for (const el of clone.querySelectorAll('*')) {
    for (const attr of ['id', 'for', 'aria-labelledby', 'aria-describedby', 'aria-controls']) {
      if (el.hasAttribute(attr)) el.setAttribute(attr, el.getAttribute(attr).split(' ').map(rename).join(' '));
    }
    // Attributes in name order: one set when the element was made or later by a patch is the same attribute.
    const attrs = [...el.attributes].map((a) => [a.name, a.value]).sort(([a], [b]) => a.localeCompare(b));
    for (const [name] of attrs) el.removeAttribute(name);
    for (const [name, value] of attrs) el.setAttribute(name, value);
  }
  return clone.outerHTML;
}"""
# The order of what the transcript shows, by kind (and how each tool call and approval ended).
TRANSCRIPT_ORDER = """() => [...document.querySelectorAll('[data-testid="transcript"] [data-testid]')]
  .filter((el) => ['user-message', 'assistant-message', 'tool-call', 'approval-card', 'subagent-card', 'run-error',
                   'run-notice'].includes(el.dataset.testid))
  .filter((el) => !el.parentElement.closest('[data-testid="subagent-card"]'))
  .map((el) => el.dataset.testid + (el.dataset.outcome ? `:${el.dataset.outcome}` : '')
               + (el.dataset.status ? `:${el.dataset.status}` : ''))"""
CLOCK = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?|\b\d{1,2}:\d{2}(:\d{2})?(\s?[AP]M)?\b"
)


@pytest.fixture(scope="module")
def web_env() -> dict[str, str]:
    return {"PA_DEMO_DELAY_MS": "0"}


def normalised(html: str) -> str:
    return CLOCK.sub("<time>", html)


def settled_transcript(page: Any, timeout: float = 30.0, idle: bool = True) -> str:
    """The transcript once it stopped changing (what loads after a run, a run's details, settles) and, with `idle`,
    no run goes."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        busy = idle and page.get_by_test_id("transcript").get_attribute("aria-busy") == "true"
        html = normalised(page.evaluate(TRANSCRIPT_HTML))
        if not busy and html == last:
            return html
        last = html
        page.wait_for_timeout(300)  # a poll interval: the loop waits on the condition above, with a deadline
    raise AssertionError("the transcript kept changing")


class TranscriptLoads:
    """Counts the transcript pages the web chat loaded (GET …/messages). A run loads two: its stored user turn once
    it started, the stored run once it ended (the view then switches to it)."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.count = 0
        page.on("requestfinished", self._finished)

    def _finished(self, request: Any) -> None:
        if "/messages" in request.url and request.method == "GET":
            self.count += 1

    def wait_for(self, count: int, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while self.count < count:
            assert time.monotonic() < deadline, f"{self.count} transcript loads, not {count}"
            self.page.wait_for_timeout(100)  # a poll interval, with the deadline above


def run_to_the_end(page: Any, loads: TranscriptLoads, text: str, answer: str) -> None:
    """Send `text` and wait until its answer is shown and the view switched to the stored transcript."""
    from playwright.sync_api import expect

    before = loads.count
    send(page, text)
    expect(page.get_by_test_id("assistant-message").filter(has_text=answer)).to_have_count(1, timeout=60_000)
    loads.wait_for(before + 2)


def pending_card(page: Any, tool_text: str) -> Any:
    """The approval card waiting for a decision, once shown right after the call it holds."""
    from playwright.sync_api import expect

    card = page.get_by_test_id("approval-card").filter(has_text="waiting for you")
    expect(card).to_have_count(1, timeout=60_000)
    expect(card).to_contain_text(tool_text)
    # The call it holds says so, and the card comes right after it.
    held = page.locator('[data-testid="tool-call"]:has(+ [data-testid="approval-card"][data-status="pending"])')
    expect(held).to_have_attribute("data-outcome", "gated")
    return card


def decide(page: Any, tool_text: str, reason: str, button: str) -> None:
    card = pending_card(page, tool_text)
    card.get_by_label("Reason (optional)").fill(reason)
    card.get_by_role("button", name=button, exact=True).click()


def upload_the_document(page: Any) -> None:
    from playwright.sync_api import expect

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Knowledge").click()
    page.get_by_label("File").set_input_files({"name": "zephyr.md", "mimeType": "text/markdown", "buffer": MARKDOWN})
    page.get_by_role("button", name="Upload", exact=True).click()
    expect(page.get_by_test_id("document").filter(has_text="zephyr.md")).to_have_attribute(
        "data-status", "ready", timeout=60_000
    )
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Chats").click()


def test_the_transcript_after_a_reload_is_what_the_run_showed_live(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    upload_the_document(page)
    new_chat(page)
    loads = TranscriptLoads(page)

    search = "/tool search_knowledge " + json.dumps({"query": "Zephyr valve recalibrated"})
    run_to_the_end(page, loads, search, "search_knowledge")
    run_to_the_end(page, loads, "/tool calculate " + json.dumps({"expression": "1/0"}), "calculate")

    before = loads.count
    send(page, "/tool send_demo_message " + json.dumps({"to": "team@example.com", "text": "the weekly report"}))
    decide(page, "team@example.com", "Looks fine", "Approve")
    expect(page.get_by_test_id("assistant-message").filter(has_text="queued")).to_have_count(1, timeout=60_000)
    loads.wait_for(before + 2)
    settled_transcript(page)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "chat-approval.png"), full_page=True)

    # While the run waits for a person, a reload shows the same (the live view resumes from the run's events).
    before = loads.count
    send(page, "/tool send_demo_message " + json.dumps({"to": "all@example.com", "text": "everyone's salaries"}))
    pending_card(page, "all@example.com")
    loads.wait_for(before + 1)  # its stored user turn is shown
    waiting = settled_transcript(page, idle=False)
    page.reload()
    pending_card(page, "all@example.com")
    assert settled_transcript(page, idle=False) == waiting
    before = loads.count
    decide(page, "all@example.com", "Not to everyone", "Deny")
    expect(page.get_by_test_id("assistant-message").filter(has_text="not approved")).to_have_count(1, timeout=60_000)
    loads.wait_for(before + 1)  # the run had started before the reload: only its end loads the transcript

    run_to_the_end(
        page, loads, "/tool delegate " + json.dumps({"task": "what time is it?", "preset": "explore"}), "delegate"
    )
    live = settled_transcript(page)
    live_order = page.evaluate(TRANSCRIPT_ORDER)

    # What the live view showed at the end, in the order it happened.
    turn = ["user-message", "tool-call:done", "assistant-message"]
    assert live_order == [
        *turn,  # search_knowledge, its answer citing the passage
        "user-message",
        "tool-call:failed",
        "assistant-message",
        "user-message",
        "tool-call:done",
        "approval-card:approved",  # right after the call it held, before the answer
        "assistant-message",
        "user-message",
        "tool-call:denied",
        "approval-card:denied",
        "assistant-message",
        "user-message",
        "tool-call:done",
        "subagent-card:succeeded",
        "assistant-message",
    ], live_order

    page.reload()
    expect(page.get_by_test_id("assistant-message").filter(has_text="delegate")).to_have_count(1)
    reloaded = settled_transcript(page)
    assert page.evaluate(TRANSCRIPT_ORDER) == live_order
    if reloaded != live:
        Path(ROOT / "test-artifacts").mkdir(exist_ok=True)
        (ROOT / "test-artifacts" / "transcript-live.html").write_text(live)
        (ROOT / "test-artifacts" / "transcript-reloaded.html").write_text(reloaded)
    assert reloaded == live, "the transcript differs after a reload (test-artifacts/transcript-*.html)"
    # In plain words, the same live and after the reload.
    approved, denied = page.get_by_test_id("approval-card").all()
    expect(approved.get_by_test_id("approval-outcome")).to_have_text("Approved by alice — “Looks fine”")
    expect(denied.get_by_test_id("approval-outcome")).to_have_text("Denied by alice — “Not to everyone”")
    expect(page.get_by_test_id("tool-call").filter(has_text="calculate")).to_have_attribute("data-outcome", "failed")
    sub_agent = page.get_by_test_id("subagent-card")
    expect(sub_agent.get_by_test_id("subagent-status")).to_have_text("succeeded")
    expect(sub_agent.get_by_test_id("subagent-cost")).to_have_text(re.compile(r"^\$\d+\.\d{2,4}$"))
    expect(page.get_by_test_id("citation").filter(has_text="zephyr.md, § Maintenance")).to_have_count(1)
    violations = serious_violations(page)
    assert violations == [], describe_violations(violations)
