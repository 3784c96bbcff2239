"""Who decides whether a run's spans carry its messages (`otel_export.content_allowed`): the operator's
`PA_OTEL_CONTENT` is the ceiling, the org's `trace_content` setting (snapshotted on the RunSpec at launch) turns it on,
and a restricted chat (or internal-tier data) never has it, whatever both say. Over `pa dev` with a collector:
tests/e2e/test_dev_server_otel.py."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from personal_agent import otel_export
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import Labels, RunSpec


@pytest.fixture
def operator(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[None]:
    monkeypatch.setenv("PA_OTEL_CONTENT", "true" if request.param else "false")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def _spec(org: bool, classification: str = "standard", tier: int = 0) -> RunSpec:
    ids = {"run_id": uuid.uuid4(), "org_id": uuid.uuid4(), "user_id": None, "chat_id": uuid.uuid4()}
    labels = Labels(content_tier=tier)
    settings = {"trace_content": org, "classification": classification, "labels": labels}
    return RunSpec(**ids, model="fake:m", instructions="", mode="inline", **settings)


@pytest.mark.parametrize("operator", [True], indirect=True)
def test_the_org_turns_content_on_under_the_operators_ceiling(operator: None) -> None:
    assert otel_export.content_allowed(_spec(org=True))
    assert not otel_export.content_allowed(_spec(org=False))  # the default: an org that did not turn it on


@pytest.mark.parametrize("operator", [False], indirect=True)
def test_an_operator_who_does_not_allow_it_overrules_the_org(operator: None) -> None:
    assert not otel_export.content_allowed(_spec(org=True))


@pytest.mark.parametrize("operator", [True], indirect=True)
@pytest.mark.parametrize(("classification", "tier"), [("restricted", 2), ("restricted", 0), ("standard", 2)])
def test_never_for_a_restricted_chat_or_internal_data(operator: None, classification: str, tier: int) -> None:
    assert not otel_export.content_allowed(_spec(org=True, classification=classification, tier=tier))


def test_a_spec_from_before_the_setting_has_it_off() -> None:
    spec = _spec(org=True).model_dump(mode="json")
    del spec["trace_content"]
    assert RunSpec.model_validate(spec).trace_content is False
