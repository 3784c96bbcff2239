"""Web Push for approvals in headless Chromium against a `pa dev` stack: a push message delivered to the web chat's
service worker (through the DevTools protocol, the way DevTools' own "Push" button does) becomes a notification,
and the switch on the Approvals page tells the truth about this browser."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.e2e.web_browser import open_page
from tests.e2e.web_chat_stack import (
    DevStack,
    describe_violations,
    screenshot,
    serious_violations,
)
from tests.e2e.web_chat_steps import page_token, sign_in

pytestmark = pytest.mark.timeout(240)

VIEWPORT = {"width": 1280, "height": 860}

APPROVAL = {
    "type": "approval_requested",
    "title": "Approval needed",
    "body": "send_email is waiting for your approval",
    "url": "/chats/00000000-0000-0000-0000-000000000001",
    "tag": "approval-a1",
    "approval_id": "a1",
    "run_id": "r1",
    "chat_id": "00000000-0000-0000-0000-000000000001",
}

# The notifications the worker shows, once there are `count` of them (the page waits on the real list).
NOTIFICATIONS_JS = """async (count) => {
  const registration = await navigator.serviceWorker.ready;
  const deadline = Date.now() + 20000;
  for (;;) {
    const shown = await registration.getNotifications();
    if (shown.length >= count) {
      return shown.map((n) => ({ title: n.title, body: n.body, tag: n.tag, icon: n.icon, data: n.data }));
    }
    if (Date.now() > deadline) throw new Error(`${shown.length} notification(s) after 20 s, wanted ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}"""


def worker_registration_id(page: Any, origin: str) -> tuple[Any, str]:
    """A DevTools session on the page and the id of the web chat's active service worker registration."""
    assert page.evaluate("navigator.serviceWorker.ready.then(r => !!r.active)")
    cdp = page.context.new_cdp_session(page)
    found: list[dict[str, Any]] = []
    cdp.on("ServiceWorker.workerRegistrationUpdated", lambda event: found.extend(event["registrations"]))
    cdp.send("ServiceWorker.enable")
    # The current registrations are reported while `enable` is answered; evaluating round-trips the connection.
    page.evaluate("navigator.serviceWorker.ready.then(r => r.scope)")
    ours = [r for r in found if r["scopeURL"] == f"{origin}/" and not r.get("isDeleted")]
    assert ours, found
    return cdp, str(ours[-1]["registrationId"])


def test_a_push_message_shows_the_approval_notification(browser: Any, web: DevStack) -> None:
    with open_page(browser, web.url, VIEWPORT) as page:
        page.context.grant_permissions(["notifications"], origin=web.url)
        sign_in(page)
        cdp, registration_id = worker_registration_id(page, web.url)

        cdp.send(
            "ServiceWorker.deliverPushMessage",
            {"origin": web.url, "registrationId": registration_id, "data": json.dumps(APPROVAL)},
        )
        shown = page.evaluate(NOTIFICATIONS_JS, 1)
        assert len(shown) == 1, shown
        assert shown[0]["title"] == "Approval needed"
        assert shown[0]["body"] == "send_email is waiting for your approval"
        assert shown[0]["tag"] == "approval-a1"
        assert shown[0]["icon"] == f"{web.url}/icon-192.png"
        assert shown[0]["data"] == {"url": APPROVAL["url"]}

        # The same approval again replaces its notification (same tag) instead of stacking a second one.
        cdp.send(
            "ServiceWorker.deliverPushMessage",
            {"origin": web.url, "registrationId": registration_id, "data": json.dumps(APPROVAL)},
        )
        # A payload that is not JSON still shows something: a plain notification that opens the approvals.
        cdp.send(
            "ServiceWorker.deliverPushMessage",
            {"origin": web.url, "registrationId": registration_id, "data": "not json {"},
        )
        page.evaluate(NOTIFICATIONS_JS, 2)
        shown = page.evaluate(NOTIFICATIONS_JS, 2)
        assert len(shown) == 2, shown
        assert sorted(n["title"] for n in shown) == ["Approval needed", "Personal Agent"], shown
        generic = next(n for n in shown if n["title"] == "Personal Agent")
        assert generic["data"] == {"url": "/approvals"} and generic["tag"] == ""


def test_the_approvals_page_says_truthfully_what_push_can_do_here(browser: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    with open_page(browser, web.url, VIEWPORT) as page:
        page.context.grant_permissions(["notifications"], origin=web.url)
        sign_in(page)
        assert page.evaluate("navigator.serviceWorker.ready.then(r => !!r.active)")
        page.goto("/approvals")
        toggle = page.get_by_test_id("push-toggle")
        switch = toggle.get_by_role("switch", name="Notify me on this device when an approval is waiting")
        state = page.get_by_test_id("push-state")
        # `pa dev` has a VAPID key and the browser may notify: push is available, and off until turned on.
        expect(state).to_have_attribute("data-state", "off")
        expect(state).to_have_text("Off on this device.")
        expect(switch).to_have_attribute("aria-checked", "false")
        expect(switch).to_be_enabled()

        switch.click()
        # Turning it on subscribes at the browser vendor's push service. Whatever happens, the page must say so:
        # either it is on and the server holds this browser's subscription, or it names the failure and stays off.
        error = page.get_by_test_id("push-error")
        expect(error.or_(state.and_(page.locator("[data-state=on]")))).to_be_visible(timeout=60_000)
        token = page_token(page)
        with web.api(token) as api:
            records = api.get("/api/v1/push/subscriptions").json()["items"]
        endpoint = page.evaluate(
            "navigator.serviceWorker.ready.then(r => r.pushManager.getSubscription()).then(s => s && s.endpoint)"
        )
        if error.is_visible():
            # Headless Chromium has no push service: it refuses the subscription, and the page names that.
            failure = re.compile("refused a push subscription|could not sign up with its push service")
            expect(error).to_contain_text(failure)
            expect(state).to_have_attribute("data-state", "off")
            expect(switch).to_have_attribute("aria-checked", "false")
            assert endpoint is None, "a failed sign-up leaves no browser subscription behind"
            assert records == [], "nothing is recorded at the server"
        else:
            expect(switch).to_have_attribute("aria-checked", "true")
            assert endpoint and [r["endpoint"] for r in records] == [endpoint]
        violations = serious_violations(page)
        assert not violations, describe_violations(violations)
        screenshot(page, "push-toggle")


def test_a_site_blocked_from_notifying_is_shown_as_blocked(browser: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    with open_page(browser, web.url, VIEWPORT) as page:
        sign_in(page)
        # What "Block" in the site settings does: Playwright can only grant permissions, DevTools can deny them.
        context_id = page.context.new_cdp_session(page).send("Target.getTargetInfo")["targetInfo"]["browserContextId"]
        browser.new_browser_cdp_session().send(
            "Browser.setPermission",
            {
                "permission": {"name": "notifications"},
                "setting": "denied",
                "origin": web.url,
                "browserContextId": context_id,
            },
        )
        assert page.evaluate("Notification.permission") == "denied"
        page.goto("/settings")
        state = page.get_by_test_id("push-state")
        expect(state).to_have_attribute("data-state", "denied")
        expect(state).to_contain_text("blocked for this site")
        expect(page.get_by_role("switch", name="Notify me on this device when an approval is waiting")).to_be_disabled()
