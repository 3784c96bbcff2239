"""`POST /v1/responses` as OpenAI's SDKs send it. Like Chat Completions, fields the platform does not use are
accepted and ignored (`store` among them: every run is kept, for the ledger and the chat)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from personal_agent.openai_api.chat_schema import MAX_MESSAGES, MAX_TOOLS, ContentPart

RESPONSE_ID_PREFIX = "resp_"


class _Open(BaseModel):
    model_config = ConfigDict(extra="ignore")


class InputItem(_Open):
    """A message (`role` + `content`), a `function_call` the model made, or the caller's `function_call_output`."""

    type: Literal["message", "function_call", "function_call_output"] = "message"
    role: Literal["system", "developer", "user", "assistant"] | None = None
    content: str | list[ContentPart] | None = None
    call_id: str | None = Field(None, max_length=256)
    name: str | None = Field(None, max_length=64)
    arguments: str | None = Field(None, max_length=200_000)
    output: str | list[dict[str, Any]] | None = None


class FunctionTool(_Open):
    type: Literal["function"]
    name: str = Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")
    description: str | None = Field(None, max_length=4000)
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class TextFormat(_Open):
    type: Literal["text", "json_schema", "json_object"] = "text"
    name: str | None = None
    schema_: dict[str, Any] | None = Field(None, alias="schema")
    strict: bool | None = None


class TextConfig(_Open):
    format: TextFormat | None = None


class ResponseRequest(_Open):
    model: str = Field(min_length=1, max_length=200)
    input: str | list[InputItem] = Field(min_length=1)
    instructions: str | None = Field(None, max_length=32_000)
    previous_response_id: str | None = Field(None, max_length=80)
    store: bool = True
    background: bool = False
    stream: bool = False
    tools: list[FunctionTool] | None = Field(None, max_length=MAX_TOOLS)
    tool_choice: str | dict[str, Any] | None = None
    text: TextConfig | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    max_output_tokens: int | None = Field(None, ge=1, le=1_000_000)
    metadata: dict[str, str] | None = None

    def items(self) -> list[InputItem]:
        if isinstance(self.input, str):
            return [InputItem(type="message", role="user", content=self.input)]
        if len(self.input) > MAX_MESSAGES:
            from personal_agent.errors import InvalidInput

            raise InvalidInput(f"at most {MAX_MESSAGES} input items", code="too_many_items", param="input")
        return self.input
