"""`pa login` approved in the browser: the terminal prints a code and the web chat's /device page; a person signed
in to the web chat opens it (the code filled in from the link), approves, and the terminal is signed in as them."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.pa_dev import PA, ROOT
from tests.e2e.terminal_client import pa
from tests.e2e.web_chat_stack import DevStack
from tests.e2e.web_chat_steps import sign_in

pytestmark = pytest.mark.timeout(300)


def test_a_terminal_signs_in_through_the_device_page(web: DevStack, page: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PA_URL": web.url,
        "PA_CONFIG_DIR": str(tmp_path / "config"),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    login = subprocess.Popen(
        [str(PA), "login"], cwd=ROOT / "docs", env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert login.stdout is not None
    login.stdout.readline()  # "To sign in, open ... and enter the code ..."
    link = login.stdout.readline().strip().removeprefix("(or open ").removesuffix(")")
    assert link.startswith(f"{web.url}/device?user_code=")

    sign_in(page)
    page.goto(link)
    expect(page.get_by_role("heading", name="Sign in a terminal")).to_be_visible()
    expect(page.get_by_label("Code")).to_have_value(link.rsplit("=", 1)[1])
    page.get_by_role("button", name="Approve").click()
    expect(page.get_by_test_id("device-approved")).to_contain_text("signed in as alice")

    out, err = login.communicate(timeout=60)
    assert login.returncode == 0, err
    assert "as alice (org acme)" in out
    me = pa(env, "run", "--json", "hello")  # the stored login works
    assert me.returncode == 0, me.stderr
