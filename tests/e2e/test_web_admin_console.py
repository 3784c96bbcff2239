"""The admin console, complete, in a real browser against a `pa dev` stack: an admin adds an OpenAI-compatible
provider pointing at a model server on loopback, presses "Test connection" and sees the models it lists, adds one
with tags and prices; sets a member's cap beside the org's (and the member's next run is refused); schedules a
workflow and sees its next runs before saving; reads the approval audit with names, the reason and a link to the
chat. A member's Settings calls no admin-only route (no 403 in its network log)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.e2e.web_browser import DESKTOP, open_page
from tests.e2e.web_chat_stack import ROOT, DevStack, serious_violations
from tests.e2e.web_chat_steps import sign_in
from tests.fake_provider import FakeProvider, running_fake_provider

pytestmark = pytest.mark.timeout(300)
SCREENSHOTS = ROOT / "docs" / "screenshots"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeProvider]:
    with running_fake_provider(models=("llama3.2", "qwen2.5-coder")) as server:
        yield server


@pytest.fixture(scope="module")
def web_env(fake: FakeProvider) -> dict[str, str]:
    # The operator allow-lists loopback for org providers: the "Ollama" here is the fake on 127.0.0.1.
    return {"PA_DEMO_DELAY_MS": "0", "PA_PROVIDER_ALLOW_HOSTS": "127.0.0.1"}


def _sign_in_as(page: Any, user: str, role: str) -> None:
    from playwright.sync_api import expect

    page.goto("/")
    page.get_by_label("User", exact=True).fill(user)
    page.get_by_label("Role").select_option(role)
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_test_id("who")).to_contain_text("acme")


def _until(page: Any, check: Any, what: str, seconds: float = 60.0, describe: Any = None) -> Any:
    """`check()`'s first truthy answer, polled with the page's own timer (which lets the page's events in)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        page.wait_for_timeout(200)
    raise AssertionError(f"timed out waiting for {what}" + (f": {describe()}" if describe else ""))


def test_a_members_settings_call_no_admin_only_route(browser: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    with open_page(browser, web.url, DESKTOP) as page:
        _sign_in_as(page, "bob", "user")
        refused: list[str] = []
        called: list[str] = []
        answered: list[str] = []

        def sent(request: Any) -> None:
            if "/api/v1/" in request.url:
                called.append(request.url)

        def got(response: Any) -> None:
            answered.append(response.url)
            if response.status in (401, 403):
                refused.append(f"{response.status} {response.url}")

        page.on("request", sent)
        page.on("response", got)
        page.on("requestfailed", lambda r: answered.append(r.url))
        page.goto("/settings")
        expect(page.get_by_role("heading", name="Settings", exact=True)).to_be_visible()
        expect(page.get_by_text("Only organisation admins can manage provider keys.")).to_be_visible()
        expect(page.get_by_role("heading", name="Your default model")).to_be_visible()
        unanswered = lambda: sorted(set(called) - set(answered))  # noqa: E731
        _until(page, lambda: called and not unanswered(), f"answers to the Settings page's calls: {unanswered()}")
        assert called, "the Settings page called no API at all"
        assert refused == [], f"a member's Settings called routes it may not: {refused}"
        assert not [u for u in called if "/api/v1/keys" in u or "/api/v1/admin/" in u], called


def test_an_admin_adds_a_local_provider_tests_it_and_adds_a_model(page: Any, web: DevStack, fake: FakeProvider) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    page.goto("/admin/models")
    expect(page.locator('[data-ready="true"]').first).to_be_attached()
    form = page.get_by_role("form", name="Add a provider")
    form.get_by_role("button", name="Ollama").click()  # fills the kind, a local base URL and the name
    expect(form.get_by_label("Provider name")).to_have_value("ollama")
    expect(form.get_by_label("Base URL")).to_have_value("http://localhost:11434/v1")
    form.get_by_label("Provider name").fill("lab")
    form.get_by_label("Base URL").fill(fake.base_url)
    form.get_by_label("Trust tier").select_option("1")
    form.get_by_role("button", name="Test connection").click()  # before saving it
    expect(form.get_by_test_id("connection-result")).to_contain_text("it lists 2 models")
    form.get_by_role("button", name="Add provider").click()

    card = page.get_by_test_id("provider").filter(has_text="lab")
    expect(card).to_have_count(1)
    expect(card).to_contain_text("OpenAI-compatible")
    expect(card).to_contain_text("tier 1")
    card.get_by_role("button", name="Test connection").click()
    result = card.get_by_test_id("connection-result")
    expect(result).to_contain_text(f"connected to {fake.base_url.split('/')[2]}")
    expect(result).to_contain_text("it lists 2 models")
    assert fake.model_list_headers and all("authorization" not in h for h in fake.model_list_headers)

    adding = card.get_by_role("form", name="Add a model to lab")
    adding.get_by_label("Model name").fill("llama3.2")
    adding.get_by_label("coding").check()
    adding.get_by_label("cheap").check()
    adding.get_by_label("USD per M input tokens").fill("0.2")
    adding.get_by_label("USD per M output tokens").fill("0.6")
    adding.get_by_role("button", name="Add model").click()
    row = card.get_by_test_id("model-row").filter(has_text="llama3.2")
    expect(row).to_have_count(1)
    expect(row.get_by_label("llama3.2 input price")).to_have_value("0.2")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "admin-provider.png"), full_page=True)

    # Edit: the provider moves to another address (refused: off the allow-list), then back to tier 2.
    card.get_by_role("button", name="Edit lab").click()
    edit = card.get_by_role("form", name="Edit lab")
    edit.get_by_label("Base URL").fill("http://10.1.2.3:11434/v1")
    edit.get_by_role("button", name="Save provider").click()
    expect(card.get_by_role("alert")).to_contain_text("base_url")
    edit.get_by_label("Base URL").fill(fake.base_url)
    edit.get_by_label("Trust tier").select_option("2")
    edit.get_by_role("button", name="Save provider").click()
    expect(card).to_contain_text("tier 2")
    expect(card.get_by_role("alert")).to_have_count(0)
    assert not serious_violations(page)

    listed = web.api(web.token()).get("/api/v1/models").json()["items"]
    [model] = [m for m in listed if m["id"] == "lab:llama3.2"]
    assert (model["tier"], sorted(model["tags"])) == (2, ["cheap", "coding"])


def test_an_admin_caps_a_member_beside_the_org_and_the_members_next_run_is_refused(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    carol = web.api(web.token(user="carol", role="user"))  # signs carol in: a member of acme
    sign_in(page)
    page.goto("/admin/budgets")
    expect(page.locator('[data-ready="true"]').first).to_be_attached()
    page.get_by_label("Organisation cap (USD per month)").fill("40")
    page.get_by_role("button", name="Set cap", exact=True).click()
    expect(page.get_by_test_id("budget").filter(has_text="Organisation")).to_contain_text("of $40.00 this month")

    page.get_by_label("Member", exact=True).select_option(label="carol")
    page.get_by_label("Member cap (USD per month)").fill("0")
    page.get_by_role("button", name="Set member cap").click()
    member = page.get_by_test_id("budget").filter(has_text="carol")
    expect(member).to_contain_text("of $0.00 this month")
    expect(member).to_contain_text("member")
    assert not serious_violations(page)

    chat = carol.post("/api/v1/chats", json={}).json()
    refused = carol.post(f"/api/v1/chats/{chat['id']}/runs", json={"message": "hi", "mode": "inline"})
    assert refused.status_code == 429, refused.text
    assert (refused.json()["code"], refused.json()["details"]["cap"]) == ("budget_exceeded", "user")
    admin = web.api(web.token())
    admin_chat = admin.post("/api/v1/chats", json={}).json()
    assert admin.post(f"/api/v1/chats/{admin_chat['id']}/runs", json={"message": "hi"}).status_code == 202


def test_an_admin_schedules_a_workflow_after_seeing_its_next_runs(page: Any) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    page.goto("/admin/workflows")
    expect(page.locator('[data-ready="true"]').first).to_be_attached()
    page.get_by_label("Name", exact=True).fill("Morning digest")
    page.get_by_role("button", name="Create workflow").click()
    workflow = page.get_by_test_id("workflow").filter(has_text="Morning digest")
    schedule = workflow.get_by_test_id("schedule")
    expect(schedule).to_contain_text("Not scheduled")

    schedule.get_by_label("Schedule expression").fill("every morning")
    expect(schedule.get_by_test_id("schedule-preview")).to_contain_text("invalid schedule expression")
    schedule.get_by_label("Time zone").fill("Europe/Berlin")
    schedule.get_by_label("Schedule expression").fill("cron(30 7 ? * MON-FRI *)")
    fires = schedule.get_by_test_id("next-fire")
    expect(fires).to_have_count(5)
    expect(schedule.get_by_test_id("schedule-preview")).to_contain_text("Next runs (Europe/Berlin)")
    shown = fires.locator("time").evaluate_all("ts => ts.map(t => t.dateTime)")
    berlin = [datetime.fromisoformat(t).astimezone(ZoneInfo("Europe/Berlin")) for t in shown]
    assert berlin == sorted(berlin) and len({t.date() for t in berlin}) == 5
    assert all((t.hour, t.minute) == (7, 30) and t.isoweekday() <= 5 for t in berlin)
    expect(fires.first).to_contain_text("07:30")  # shown in the schedule's own time zone

    schedule.get_by_role("button", name="Save schedule").click()
    expect(workflow.get_by_test_id("schedule-badge")).to_have_text("cron(30 7 ? * MON-FRI *)")
    expect(schedule).to_contain_text("Runs on cron(30 7 ? * MON-FRI *) (Europe/Berlin)")
    assert not serious_violations(page)


def test_the_approval_audit_names_who_decided_why_and_links_the_chat(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    api = web.api(web.token())
    chat = api.post("/api/v1/chats", json={"title": "Weekly report"}).json()
    # The demo model asks for approval (Auto would pick the provider the test above added).
    body = {"message": "Please send the weekly report to the team", "mode": "durable", "model": "offline:demo"}
    started = api.post(f"/api/v1/chats/{chat['id']}/runs", json=body)
    assert started.status_code == 202, started.text
    run_url = f"/api/v1/runs/{started.json()['run_id']}"

    def pending() -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = api.get("/api/v1/approvals", params={"status": "pending"}).json()["items"]
        return [a for a in items if a["chat_id"] == chat["id"]]

    [approval] = _until(page, pending, "the demo model to ask for approval", describe=lambda: api.get(run_url).text)
    decided = api.post(f"/api/v1/approvals/{approval['id']}", json={"decision": "deny", "reason": "not this week"})
    assert decided.status_code == 200, decided.text

    sign_in(page)
    page.goto("/admin/audit")
    expect(page.locator('[data-ready="true"]').first).to_be_attached()
    rows = page.get_by_test_id("audit-row")
    denied = rows.filter(has=page.get_by_test_id("audit-action").get_by_text("denied", exact=True))
    expect(denied).to_have_count(1)
    expect(denied).to_contain_text("not this week")
    expect(denied).to_contain_text("alice")  # who decided, by name
    expect(denied).to_contain_text(approval["tool"])
    asked = rows.filter(has=page.get_by_test_id("audit-action").get_by_text("asked", exact=True))
    expect(asked.first).to_contain_text("the system")
    assert not serious_violations(page)
    denied.get_by_role("link", name="Open chat").click()
    page.wait_for_url(f"**/chats/{chat['id']}")
    expect(page.get_by_test_id("user-message").first).to_contain_text("weekly report")
