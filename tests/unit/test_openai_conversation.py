"""A `/v1` conversation becomes the run's own messages that pydantic-ai reads back unchanged (images included),
and malformed conversations are refused with the `param` at fault before anything is stored."""

from __future__ import annotations

import base64

import pytest
from pydantic_ai.messages import BinaryContent, ImageUrl, ModelMessagesTypeAdapter, ModelRequest, ModelResponse

from personal_agent.errors import InvalidInput
from personal_agent.openai_api.chat_schema import ChatMessage
from personal_agent.openai_api.conversation import from_chat

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n....").decode()


def _messages(*raw: dict[str, object]) -> list[ChatMessage]:
    return [ChatMessage.model_validate(m) for m in raw]


def test_system_user_images_assistant_calls_and_tool_results_round_trip_through_pydantic_ai() -> None:
    conversation = from_chat(
        _messages(
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what is in "},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                    {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
                ],
            },
            {
                "role": "assistant",
                "content": "Let me look.",
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "zoom", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "a cat"},
        )
    )
    assert conversation.vision and conversation.labels.untrusted
    request, response, results = ModelMessagesTypeAdapter.validate_python(conversation.turns)
    assert isinstance(request, ModelRequest) and isinstance(response, ModelResponse)
    assert [p.part_kind for p in request.parts] == ["system-prompt", "user-prompt"]
    content = request.parts[1].content
    assert isinstance(content, list) and isinstance(content[1], BinaryContent) and isinstance(content[2], ImageUrl)
    assert response.tool_calls[0].tool_name == "zoom" and response.text == "Let me look."
    assert isinstance(results, ModelRequest) and results.parts[0].part_kind == "tool-return"
    assert results.parts[0].metadata == {"untrusted": True, "content_tier": 0}


@pytest.mark.parametrize(
    ("messages", "param", "code"),
    [
        ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}], "messages", "invalid_messages"),
        ([{"role": "tool", "tool_call_id": "x", "content": "?"}], "messages[0].tool_call_id", "unknown_tool_call"),
        ([{"role": "user", "content": "  "}], "messages[0].content", "empty_message"),
        (
            [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://insecure/x.png"}}]}],
            "messages[0].content[0]",
            "invalid_image",
        ),
        (
            [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,!!"}}]}],
            "messages[0].content[0]",
            "invalid_image",
        ),
        (
            [{"role": "system", "content": [{"type": "image_url", "image_url": "https://x/y.png"}]}],
            "messages[0].content",
            "invalid_content",
        ),
    ],
)
def test_malformed_conversations_are_refused_with_the_param_at_fault(
    messages: list[dict[str, object]], param: str, code: str
) -> None:
    with pytest.raises(InvalidInput) as refused:
        from_chat(_messages(*messages))
    assert refused.value.code == code and refused.value.details.get("param") == param
