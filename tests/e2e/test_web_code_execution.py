"""`run_python` in the web chat, in a real browser (Debian's headless Chromium) against a `pa dev` stack of its own:
a CSV dropped on the composer is analysed by the tool (the demo model told what to call), and its card, collapsed to
the tool's name, opens on the code, what it printed and its value, the chart drawn inline from the image's bytes and
the other file it wrote as a download; after a reload the card shows the same."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.web_chat_stack import describe_violations, screenshot, serious_violations
from tests.e2e.web_chat_steps import drop_files, new_chat, sign_in

pytestmark = pytest.mark.timeout(240)

CSV = b"month,revenue\nJan,120\nFeb,95\nMar,143\n"
CODE = (
    "import pandas as pd\nimport matplotlib.pyplot as plt\ndf = pd.read_csv('sales.csv')\n"
    "df.plot(x='month', y='revenue', kind='bar')\nplt.savefig('revenue.png')\n"
    "df.to_csv('summary.csv', index=False)\nprint('months', len(df))\nfloat(df['revenue'].sum())"
)


def _card_shows_the_run(page: Any) -> Any:
    from playwright.sync_api import expect

    card = page.get_by_test_id("tool-call").filter(has_text="run_python")
    # The session's first pandas and matplotlib import (and font cache) took 14 s at a load of 15 on 2 cores, and
    # over 30 s once in the full suite: a bound of 120 s for the call to end, not the page's default 30 s.
    expect(card.get_by_test_id("tool-outcome")).to_have_text("done", timeout=120_000)
    expect(card.get_by_test_id("code-run")).to_be_hidden()  # collapsed to its name until opened
    card.locator("summary").first.click()
    expect(card.get_by_test_id("code-run-code")).to_contain_text("pd.read_csv('sales.csv')")
    expect(card.get_by_test_id("code-run-stdout")).to_contain_text("months 3")
    expect(card.get_by_test_id("code-run-value")).to_have_text("358.0")
    chart = card.get_by_test_id("code-run-image").get_by_test_id("attachment-thumb")
    expect(chart).to_be_visible()
    page.wait_for_function("(el) => el.width > 100 && el.height > 100", arg=chart.element_handle())
    return card


def test_a_csv_analysis_shows_its_code_output_chart_and_files(page: Any) -> None:
    from playwright.sync_api import expect

    console_errors: list[str] = []
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    sign_in(page)
    new_chat(page)
    drop_files(page, [("sales.csv", "text/csv", CSV)])
    chip = page.get_by_test_id("composer").get_by_test_id("attachment-chip")
    expect(chip).to_have_attribute("data-state", "ready")
    page.get_by_role("textbox", name="Message").fill("Here are our sales.")
    page.get_by_role("button", name="Send", exact=True).click()
    expect(page.get_by_test_id("assistant-message")).to_have_count(1)
    command = "/tool run_python " + json.dumps({"code": CODE, "files": ["sales.csv"]})
    page.get_by_role("textbox", name="Message").fill(command)
    page.get_by_role("button", name="Send", exact=True).click()

    card = _card_shows_the_run(page)
    screenshot(page, "code-execution-card")
    found = serious_violations(page)
    assert not found, describe_violations(found)
    with page.expect_download() as downloading:
        card.get_by_test_id("code-run-file").filter(has_text="summary.csv").click()
    with open(downloading.value.path(), "rb") as saved:
        assert saved.read().startswith(b"month,revenue")

    page.reload()  # the stored transcript shows the same card
    _card_shows_the_run(page)
    expect(page.get_by_role("alert")).to_have_count(0)
    assert not console_errors, console_errors
