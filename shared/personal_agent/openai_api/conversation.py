"""A `/v1` conversation as the run's own messages: OpenAI chat messages (or Responses input items, through
`response_input`) become pydantic-ai message JSON, built without importing pydantic-ai (the API function does
not ship it).

Consecutive system, user and tool messages form one model request; each assistant message is one model response
(its text and its tool calls). A tool message is the caller's answer to one of its own tools: text from outside
the platform, so it enters the run labelled untrusted (its part's metadata, which the gates read, and the run's
launch labels)."""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from personal_agent.errors import InvalidInput
from personal_agent.openai_api.chat_schema import ChatMessage, ContentPart
from personal_agent.spec.labels import UNTRUSTED_METADATA
from personal_agent.spec.run_spec import MAX_MESSAGE_CHARS, Labels

_DATA_URL = re.compile(r"^data:(image/(?:png|jpeg|gif|webp));base64,(.+)$", re.DOTALL)
TEXT_PARTS = ("text", "input_text", "output_text")
MAX_CONVERSATION_BYTES = 25_000_000
"""The largest conversation a request may carry (images as data URLs included)."""


@dataclass
class Conversation:
    """The run's messages, the text of its last user turn, and what entered with them."""

    turns: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""
    labels: Labels = Labels()
    vision: bool = False
    _parts: list[dict[str, Any]] = field(default_factory=list)
    calls: dict[str, str] = field(default_factory=dict)
    """Tool call id -> tool name, from the assistant turns (a tool result must answer one)."""

    def request_part(self, part: dict[str, Any]) -> None:
        self._parts.append({**part, "timestamp": _now()})

    def response(self, parts: list[dict[str, Any]]) -> None:
        self._flush()
        self.turns.append({"kind": "response", "parts": parts, "timestamp": _now()})

    def finish(self) -> Conversation:
        self._flush()
        if not self.turns or self.turns[-1]["kind"] != "request":
            raise InvalidInput(
                "the last message must be from the user or a tool", code="invalid_messages", param="messages"
            )
        if len(json.dumps(self.turns)) > MAX_CONVERSATION_BYTES:
            raise InvalidInput("the conversation is too long", code="context_length_exceeded", param="messages")
        return self

    def _flush(self) -> None:
        if self._parts:
            self.turns.append({"kind": "request", "parts": self._parts})
            self._parts = []


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def from_chat(messages: list[ChatMessage]) -> Conversation:
    """The run's messages from Chat Completions `messages`."""
    conversation = Conversation()
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if message.role in ("system", "developer"):
            conversation.request_part({"part_kind": "system-prompt", "content": text_of(message.content, where)})
        elif message.role == "user":
            add_user(conversation, message.content, where)
        elif message.role == "assistant":
            add_assistant(conversation, text_of(message.content, where), _assistant_calls(message))
        else:
            add_tool_result(conversation, message.tool_call_id, text_of(message.content, where), where)
    return conversation.finish()


def add_user(conversation: Conversation, content: str | list[ContentPart] | None, where: str) -> None:
    if isinstance(content, str) or content is None:
        text = content or ""
        parts: str | list[Any] = text
    else:
        parts = [_user_part(conversation, part, f"{where}.content[{i}]") for i, part in enumerate(content)]
        text = "".join(p for p in parts if isinstance(p, str))
    if len(text) > MAX_MESSAGE_CHARS:
        raise InvalidInput(
            f"a message is longer than {MAX_MESSAGE_CHARS} characters", code="message_too_long", param=where
        )
    if not text.strip() and isinstance(parts, str):
        raise InvalidInput("a user message is empty", code="empty_message", param=f"{where}.content")
    conversation.text = text
    conversation.request_part({"part_kind": "user-prompt", "content": parts})


def add_assistant(conversation: Conversation, text: str, calls: list[tuple[str, str, str]]) -> None:
    """An assistant turn: its text and its calls `(id, name, arguments JSON)`."""
    parts: list[dict[str, Any]] = [{"part_kind": "text", "content": text}] if text else []
    for call_id, name, arguments in calls:
        conversation.calls[call_id] = name
        parts.append({"part_kind": "tool-call", "tool_name": name, "args": arguments or "{}", "tool_call_id": call_id})
    conversation.response(parts)


def add_tool_result(conversation: Conversation, call_id: str | None, text: str, where: str) -> None:
    """The caller's result of one of its tools: untrusted, and it must answer a call the conversation made."""
    name = conversation.calls.get(call_id or "")
    if name is None:
        raise InvalidInput(
            "a tool message must answer a tool call of an earlier assistant message",
            code="unknown_tool_call",
            param=f"{where}.tool_call_id",
        )
    conversation.labels = conversation.labels.join(Labels(untrusted=True))
    conversation.request_part(
        {
            "part_kind": "tool-return",
            "tool_name": name,
            "tool_call_id": call_id,
            "content": text,
            "metadata": dict(UNTRUSTED_METADATA),
        }
    )


def _assistant_calls(message: ChatMessage) -> list[tuple[str, str, str]]:
    return [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []]


def text_of(content: str | list[ContentPart] | None, where: str) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if any(part.type not in TEXT_PARTS for part in content):
        raise InvalidInput("only a user message may carry images", code="invalid_content", param=f"{where}.content")
    return "".join(part.text or "" for part in content)


def _user_part(conversation: Conversation, part: ContentPart, where: str) -> Any:
    if part.type in TEXT_PARTS:
        return part.text or ""
    url = part.image_url.url if part.image_url is not None and not isinstance(part.image_url, str) else part.image_url
    if not url:
        raise InvalidInput("an image part needs its `image_url`", code="invalid_image", param=where)
    conversation.vision = True
    if (found := _DATA_URL.match(url)) is not None:
        try:
            base64.b64decode(found.group(2), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise InvalidInput("the image's data URL is not base64", code="invalid_image", param=where) from exc
        return {"kind": "binary", "data": found.group(2), "media_type": found.group(1)}
    if url.startswith("https://"):
        return {"kind": "image-url", "url": url}
    raise InvalidInput(
        "an image must be an https URL or a base64 data URL (png, jpeg, gif, webp)", code="invalid_image", param=where
    )
