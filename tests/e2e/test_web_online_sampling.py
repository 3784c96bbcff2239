"""Online sampling from the admin console (issue 37): an org admin sets an agent's share of production runs judged on
the Feedback page, a member's run with that agent is judged, and the page's "Judged samples by day" table shows the
day's row for the agent; setting 0 % turns it off."""

from __future__ import annotations

import json
import time
from typing import Any

from tests.e2e.web_chat_stack import DevStack, describe_violations, serious_violations
from tests.e2e.web_chat_steps import sign_in


def _agent_run(web: DevStack) -> str:
    """A member's run with the greeter agent, to its end; its id."""
    with web.api(web.token(user="bob", role="user")) as api:
        chat = api.post("/api/v1/chats", json={"agent": "greeter"})
        assert chat.status_code == 201, chat.text
        started = api.post(f"/api/v1/chats/{chat.json()['id']}/runs", json={"message": "hello there"})
        assert started.status_code == 202, started.text
        with api.stream("GET", started.json()["events_url"], timeout=120) as stream:
            types = [json.loads(line[5:])["type"] for line in stream.iter_lines() if line.startswith("data:")]
        assert types[-1] == "RUN_FINISHED", types
        return str(started.json()["run_id"])


def _judged_day(web: DevStack) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    with web.api(web.token()) as api:
        while time.monotonic() < deadline:
            days = [d for d in api.get("/api/v1/evals/online-scores").json()["items"] if d["agent_slug"] == "greeter"]
            if days and days[0]["sampled"] == days[0]["scored"] >= 1:
                return dict(days[0])
            time.sleep(0.2)  # polling the API for the judge's run to end, with a deadline
    raise AssertionError("the sampled run was not judged in 120 s")


def test_an_admin_samples_an_agent_and_sees_its_judged_runs_by_day(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    with web.api(web.token()) as api:
        agent = {"name": "Greeter", "slug": "greeter", "visibility": "org", "instructions": "Greet warmly."}
        assert api.post("/api/v1/agents", json=agent).status_code == 201
    sign_in(page)
    page.goto("/admin/feedback")
    sampling = page.get_by_test_id("online-sampling")
    expect(sampling.get_by_test_id("sampling-row")).to_have_count(0)
    form = sampling.get_by_test_id("sampling-form")
    form.get_by_label("Agent").select_option("greeter")
    form.get_by_label("Share of runs (%)").fill("100")
    form.get_by_label("Rubric").fill("Friendly and short.")
    form.get_by_role("button", name="Save sampling").click()
    expect(form.get_by_role("status")).to_have_text("Sampling 100% of greeter's runs.")
    row = sampling.get_by_test_id("sampling-row")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("greeter")
    expect(row).to_contain_text("100%")
    expect(row).to_contain_text("Friendly and short.")
    with web.api(web.token()) as api:
        (saved,) = api.get("/api/v1/evals/sampling").json()["items"]
    assert (saved["agent_slug"], saved["rate"], saved["rubric"]) == ("greeter", 1.0, "Friendly and short.")

    _agent_run(web)
    day = _judged_day(web)
    page.reload()
    scored = page.get_by_test_id("online-score-row")
    expect(scored).to_have_count(1)
    expect(scored).to_contain_text(day["day"])
    expect(scored.locator("td").nth(1)).to_have_text("greeter")
    expect(scored.locator("td").nth(2)).to_have_text(str(day["sampled"]))
    expect(scored.locator("td").nth(3)).to_have_text(str(day["scored"]))
    violations = serious_violations(page)
    assert not violations, describe_violations(violations)

    # 0 % turns it off (which runs it spares: tests/e2e/test_dev_server_online_sampling.py).
    page.get_by_test_id("sampling-row").get_by_role("button", name="Change greeter").click()
    expect(form.get_by_label("Share of runs (%)")).to_have_value("100")
    form.get_by_label("Share of runs (%)").fill("0")
    form.get_by_role("button", name="Save sampling").click()
    expect(form.get_by_role("status")).to_have_text("Sampling of greeter is off.")
    expect(page.get_by_test_id("sampling-row")).to_contain_text("0%")
    with web.api(web.token()) as api:
        (saved,) = api.get("/api/v1/evals/sampling").json()["items"]
    assert (saved["rate"], saved["rubric"]) == (0.0, "Friendly and short.")
