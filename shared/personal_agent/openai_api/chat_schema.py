"""The request bodies `/v1` accepts, as OpenAI's SDKs send them. Fields OpenAI has and the platform does not use
(`user`, `seed`, `logprobs`, `metadata`, `parallel_tool_calls`, ...) are accepted and ignored; ones that would
change the answer in a way it cannot honour (`n` > 1, audio) are refused with 400 and the `param` at fault."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_MESSAGES = 500
MAX_TOOLS = 64


class _Open(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ImageUrl(_Open):
    url: str = Field(max_length=20_000_000)
    detail: str | None = None


class ContentPart(_Open):
    type: Literal["text", "image_url", "input_text", "input_image", "output_text"]
    text: str | None = None
    image_url: ImageUrl | str | None = None


class FunctionCall(_Open):
    name: str = Field(max_length=64)
    arguments: str = Field("", max_length=200_000)


class ToolCall(_Open):
    id: str = Field(max_length=256)
    type: Literal["function"] = "function"
    function: FunctionCall


class ChatMessage(_Open):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart] | None = None
    name: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = Field(None, max_length=256)


class FunctionDef(_Open):
    name: str = Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")
    description: str | None = Field(None, max_length=4000)
    parameters: dict[str, Any] | None = None


class ToolDef(_Open):
    type: Literal["function"] = "function"
    function: FunctionDef


class JsonSchemaFormat(_Open):
    name: str = Field("output", max_length=64)
    schema_: dict[str, Any] | None = Field(None, alias="schema")
    strict: bool | None = None


class ResponseFormat(_Open):
    type: Literal["text", "json_schema", "json_object"]
    json_schema: JsonSchemaFormat | None = None


class StreamOptions(_Open):
    include_usage: bool = False


class ChatCompletionRequest(_Open):
    model: str = Field(min_length=1, max_length=200)
    messages: list[ChatMessage] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    stream_options: StreamOptions | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    max_tokens: int | None = Field(None, ge=1, le=1_000_000)
    max_completion_tokens: int | None = Field(None, ge=1, le=1_000_000)
    stop: str | list[str] | None = None
    n: int | None = Field(None, ge=1, le=1)
    response_format: ResponseFormat | None = None
    tools: list[ToolDef] | None = Field(None, max_length=MAX_TOOLS)
    tool_choice: str | dict[str, Any] | None = None
