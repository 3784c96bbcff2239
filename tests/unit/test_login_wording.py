"""The README and `pa dev`'s startup lines name the login button the way the login page shows it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _dev_login_form() -> tuple[str, str]:
    """The dev login form's heading and its submit button's label, as LoginView.vue renders them."""
    view = (ROOT / "frontend" / "src" / "views" / "LoginView.vue").read_text()
    form = re.search(r'<form v-if="session.config\?.dev_login".*?</form>', view, re.S)
    assert form, "the dev login form is not in LoginView.vue"
    heading = re.search(r"<h2[^>]*>([^<]+)</h2>", form.group(0))
    button = re.search(r'<button type="submit"[^>]*>([^<]+)</button>', form.group(0))
    assert heading and button
    return heading.group(1).strip(), button.group(1).strip()


def test_the_readme_names_the_button_the_login_page_shows() -> None:
    heading, button = _dev_login_form()
    readme = (ROOT / "README.md").read_text()
    assert f"press **{button}** under *{heading}*" in readme
    assert f"**{heading}** button" not in readme and f"choose {heading}" not in readme


def test_pa_dev_names_the_button_the_login_page_shows() -> None:
    heading, button = _dev_login_form()
    source = (ROOT / "shared" / "personal_agent" / "local" / "dev_server.py").read_text()
    assert f"press '{button}' ({heading}:" in source
    assert f"choose '{heading}'" not in source
