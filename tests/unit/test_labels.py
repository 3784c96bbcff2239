"""The two governance labels (`spec/labels.py`) travel with the data: a tool result's metadata, a child's answer,
a summary of earlier turns, the run's launch labels; they only go up."""

from __future__ import annotations

import uuid

from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserPromptPart

from personal_agent.engine.context_window import UNTRUSTED_NOTE, with_summary
from personal_agent.spec.labels import CLEAN, Labels, launch_labels, result_metadata, run_labels, run_tier
from personal_agent.spec.run_spec import RunSpec


def _spec(**extra: object) -> RunSpec:
    fields: dict[str, object] = {
        "run_id": uuid.uuid4(),
        "org_id": uuid.uuid4(),
        "user_id": uuid.uuid4(),
        "chat_id": uuid.uuid4(),
        "model": "m",
        "instructions": "i",
        "mode": "inline",
        "routing_tier": 0,
    }
    return RunSpec.model_validate({**fields, **extra})


def _returned(metadata: dict[str, object] | None, name: str = "delegate") -> list[ModelRequest | ModelResponse]:
    return [
        ModelRequest(parts=[UserPromptPart("go")]),
        ModelResponse(parts=[ToolCallPart(name, {}, "c1")]),
        ModelRequest(parts=[ToolReturnPart(name, "the answer", "c1", metadata=metadata)]),
    ]


def test_labels_only_go_up() -> None:
    high = Labels(content_tier=2, untrusted=True)
    assert CLEAN.join(high) == high and high.join(CLEAN) == high
    assert Labels(content_tier=1).join(Labels(untrusted=True)) == Labels(content_tier=1, untrusted=True)


def test_a_results_labels_raise_the_run() -> None:
    spec = _spec()
    assert run_labels(spec, _returned(None)) == CLEAN
    marked = _returned(result_metadata(Labels(content_tier=2, untrusted=True)))
    assert run_labels(spec, marked) == Labels(content_tier=2, untrusted=True)
    assert run_tier(spec, marked) == 2
    assert run_labels(_spec(labels=Labels(untrusted=True)), _returned(None)).untrusted  # launched tainted
    assert run_labels(_spec(trigger_source="webhook"), []).untrusted


def test_launch_labels_take_the_chat_the_classification_and_the_trigger() -> None:
    assert launch_labels(Labels(untrusted=True), 0, "chat") == Labels(untrusted=True)
    assert launch_labels(CLEAN, 2, "chat") == Labels(content_tier=2)
    assert launch_labels(CLEAN, 0, "webhook", [Labels(content_tier=1)]) == Labels(content_tier=1, untrusted=True)


def test_a_summary_is_a_labelled_user_part_that_keeps_its_turns_labels() -> None:
    messages = [
        *_returned(result_metadata(Labels(untrusted=True)), "web_fetch"),
        ModelRequest(parts=[UserPromptPart("next")]),
    ]
    fitted = with_summary(messages, 3, "they fetched a page", Labels(untrusted=True, content_tier=1))
    lead = fitted[0].parts[0]
    assert isinstance(fitted[0], ModelRequest) and isinstance(lead, UserPromptPart)
    assert UNTRUSTED_NOTE in str(lead.content) and "they fetched a page" in str(lead.content)
    assert run_labels(_spec(), fitted) == Labels(
        content_tier=1, untrusted=True
    )  # the tool result is gone, not its labels
