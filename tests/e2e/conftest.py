"""The e2e tests' shared fixtures, once: `pa dev` as a user runs it (`dev_server`) and, for the browser tests, a
`pa dev` stack per test module (`web`), one headless Chromium per module (`browser`) and a fresh desktop tab per
test (`page`) that fails the test on an uncaught error or a CSP refusal.

A module changes what its stack runs with by overriding `web_env` (the demo model's delay per word and any other
`pa dev` environment); the stack's data directory is named after the module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.e2e.web_browser import DESKTOP, chromium, open_page
from tests.e2e.web_chat_stack import DevStack, dev_stack, ensure_frontend_built


@pytest.fixture(scope="module")
def web_env() -> dict[str, str]:
    """`pa dev`'s extra environment for this module's stack (override in the module)."""
    return {"PA_DEMO_DELAY_MS": "0"}


@pytest.fixture(scope="module")
def web(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, web_env: dict[str, str]
) -> Iterator[DevStack]:
    ensure_frontend_built()
    name = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_").replace("_", "-")
    with dev_stack(tmp_path_factory.mktemp(name) / "data", **web_env) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Any, web: DevStack) -> Iterator[Any]:
    with open_page(browser, web.url, DESKTOP) as tab:
        yield tab


@pytest.fixture(scope="module")
def dev_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """`pa dev` as a user starts it (`tests/e2e/pa_dev.py`), one per test module."""
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev")) as server:
        yield server
