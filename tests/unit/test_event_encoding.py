"""`engine.emitter.encode`: the direct encoding of a text delta is byte for byte the event model's own JSON,
for any text a model may stream; every other event (or a delta with more fields) is the model's JSON."""

from __future__ import annotations

import pytest
from ag_ui.core import RunStartedEvent, TextMessageContentEvent, ToolCallArgsEvent

from personal_agent.engine.emitter import encode

TEXTS = [
    "word ",
    'quote " backslash \\ slash /',
    "tab\tnewline\nreturn\r nul\x00 bell\x07 escape\x1b del\x7f",
    "é ü ß — “curly” ‘quotes’ … 中文 日本語 한국어",
    "emoji 😀👍🏽 flag 🇩🇪 zwj 👩‍💻",
    "line sep \u2028 para sep \u2029 bom \ufeff nbsp \u00a0",
    "<script>alert(1)</script> & ' </",
    " ",
]


def _model_json(event: object) -> str:
    return event.model_dump_json(by_alias=True, exclude_none=True)  # type: ignore[attr-defined]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("timestamp", [None, 1_764_547_200_123])
def test_a_text_delta_encodes_exactly_as_its_model(text: str, timestamp: int | None) -> None:
    event = TextMessageContentEvent(message_id="run:0:1", delta=text, timestamp=timestamp)
    assert encode(event) == _model_json(event)


def test_a_delta_with_more_fields_and_other_events_are_the_models_json() -> None:
    events = [
        TextMessageContentEvent(message_id="m", delta="x", raw_event={"provider": "chunk"}),
        TextMessageContentEvent(message_id="m", delta="x", subagent_run_id="child"),
        ToolCallArgsEvent(tool_call_id="t", delta='{"a":1}'),
        RunStartedEvent(thread_id="chat", run_id="run"),
    ]
    for event in events:
        assert encode(event) == _model_json(event)
    assert '"rawEvent":{"provider":"chunk"}' in encode(events[0])
    assert '"subagentRunId":"child"' in encode(events[1])


def test_a_lone_surrogate_gets_the_models_own_answer() -> None:
    event = TextMessageContentEvent(message_id="m", delta="broken \ud800 half")
    try:
        expected: str | type[Exception] = _model_json(event)
    except Exception as exc:  # the model refuses it: so does encode, with the same error
        expected = type(exc)
    if isinstance(expected, str):
        assert encode(event) == expected
    else:
        with pytest.raises(expected):
            encode(event)
