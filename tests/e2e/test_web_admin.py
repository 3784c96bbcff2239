"""The admin console in a real browser against a `pa dev` stack: an admin creates a workflow, test-fires it and
sees the run in its history; adds a callback output whose receiver fails and sees the delivery retried, then
failed with its last error, and redelivers it; changes a model; and axe finds nothing serious on the console."""

from __future__ import annotations

import http.server
import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.web_chat_stack import (
    describe_violations,
    screenshot,
    serious_violations,
)
from tests.e2e.web_chat_steps import sign_in

pytestmark = pytest.mark.timeout(300)


class FailingReceiver:
    """A callback endpoint on loopback that always answers 503, counting what it got."""

    def __init__(self) -> None:
        self.hits = 0
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the http.server API)
                self.rfile.read(int(self.headers.get("content-length", 0)))
                owner.hits += 1
                self.send_response(503)
                self.end_headers()
                self.wfile.write(b"down for maintenance")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture(scope="module")
def receiver() -> Iterator[FailingReceiver]:
    got = FailingReceiver()
    yield got
    got.server.shutdown()
    got.server.server_close()


@pytest.fixture(scope="module")
def web_env(receiver: FailingReceiver) -> dict[str, str]:
    return {
        "PA_DEMO_DELAY_MS": "0",
        "PA_OUTPUT_ALLOW_HOSTS": f"127.0.0.1:{receiver.port}",  # the platform admin allow-lists the test receiver
        "PA_OUTPUT_RETRY_BASE_SECONDS": "1",
        "PA_OUTPUT_MAX_ATTEMPTS": "2",
    }


def test_an_admin_creates_a_workflow_test_fires_it_and_sees_the_run_and_a_failed_delivery(
    page: Any, receiver: FailingReceiver
) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    page.get_by_role("link", name="Admin", exact=True).click()
    expect(page.get_by_role("heading", name="Admin console")).to_be_visible()
    page.get_by_role("navigation", name="Admin sections").get_by_role("link", name="Workflows").click()
    expect(page.get_by_role("heading", name="Workflows", exact=True)).to_be_visible()

    page.get_by_label("Name", exact=True).fill("Nightly report")
    page.get_by_label("Prompt template").fill("Summarise: {{body}}")
    page.get_by_role("button", name="Create workflow").click()
    expect(page.get_by_test_id("new-secret")).to_contain_text("whsec_")
    workflow = page.get_by_test_id("workflow").filter(has_text="Nightly report")
    expect(workflow).to_have_count(1)

    # Send results to a callback that is down: retried, then shown failed with its last error.
    workflow.get_by_label("Send results to").select_option("webhook")
    workflow.get_by_label("URL").fill(f"http://127.0.0.1:{receiver.port}/results")
    workflow.get_by_role("button", name="Add output").click()
    expect(workflow.get_by_test_id("shown-secret")).to_contain_text("whsec_")
    expect(workflow.get_by_role("listitem").filter(has_text=f"http://127.0.0.1:{receiver.port}/…")).to_have_count(1)

    workflow.get_by_role("button", name="Test-fire").click()
    row = workflow.get_by_test_id("run-row").first
    expect(row).to_contain_text("test-fire")
    for _ in range(60):  # the run's status moves on: refresh the history until it shows the end
        if re.search(r"succeeded|failed", row.inner_text()):
            break
        workflow.get_by_role("button", name="Refresh").click()
        page.wait_for_timeout(500)
    expect(row).to_contain_text("succeeded")

    delivery = workflow.get_by_test_id("delivery-row").first
    for _ in range(60):
        if "failed" in delivery.inner_text() if delivery.count() else False:
            break
        workflow.get_by_role("button", name="Refresh").click()
        page.wait_for_timeout(500)
    expect(delivery).to_contain_text("failed")
    expect(delivery).to_contain_text("2 tries")
    expect(delivery).to_contain_text("HTTP 503: down for maintenance")
    assert receiver.hits == 2
    screenshot(page, "admin-workflow")

    delivery.get_by_role("button", name="Redeliver").click()
    expect(delivery).not_to_contain_text("failed")  # pending again, with a fresh set of tries
    for _ in range(60):
        if receiver.hits >= 4:
            break
        page.wait_for_timeout(500)
    assert receiver.hits == 4

    # The run history's chat link opens the workflow's chat with the run in it.
    row.get_by_role("link", name="Open chat").click()
    expect(page.get_by_test_id("user-message").first).to_contain_text("Summarise")


def test_the_admin_console_pages_have_no_serious_accessibility_violations(page: Any) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    found: dict[str, Any] = {}
    for path in (
        "/admin",
        "/admin/models",
        "/admin/budgets",
        "/admin/org",
        "/admin/members",
        "/admin/workflows",
        "/admin/audit",
    ):
        page.goto(path)
        expect(page.locator('[data-ready="true"]').first).to_be_attached()
        if path == "/admin/workflows" and page.get_by_test_id("workflow").count():
            page.get_by_test_id("workflow").first.get_by_role("button", name=re.compile("^Open")).click()
            expect(page.get_by_test_id("run-history").first).to_be_visible()
        found[path] = serious_violations(page)
    problems = {name: describe_violations(v) for name, v in found.items() if v}
    assert not problems, "\n".join(f"[{name}]\n{text}" for name, text in problems.items())


def test_an_admin_sets_a_cap_and_sees_spend_against_it(page: Any) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    page.goto("/admin/budgets")
    expect(page.locator('[data-ready="true"]').first).to_be_attached()
    page.get_by_label("Organisation cap (USD per month)").fill("40")
    page.get_by_role("button", name="Set cap").click()
    budget = page.get_by_test_id("budget").filter(has_text="Organisation")
    expect(budget).to_contain_text("of $40.00 this month")
    expect(budget.get_by_role("meter")).to_be_visible()
