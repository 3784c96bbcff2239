"""`tool_choice` of Chat Completions and Responses: `auto` (the default), `none` (the caller's tools are not
offered), `required` (the model must call a tool) or one of the caller's function tools by name
(`{"type": "function", "function": {"name"}}` in Chat Completions, `{"type": "function", "name"}` in Responses).
`required` and a name bind the model request that answers the caller's turn (`engine/tool_choice.py`), as OpenAI's
do; the agent's own tools' results are answered freely. OpenAI's other choices (`allowed_tools`, hosted tools, MCP)
are refused with 400 `unsupported_value`, a name that is not one of the request's `tools` with 400 `invalid_value`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from personal_agent.errors import InvalidInput
from personal_agent.spec.run_spec import ClientTool

PARAM = "tool_choice"


@dataclass(frozen=True)
class Choice:
    """Whether the caller's tools are offered, and what the first answering request must call (None: any or none)."""

    offer: bool = True
    forced: str | None = None


def choice_of(value: str | dict[str, Any] | None, tools: tuple[ClientTool, ...]) -> Choice:
    """The caller's `tool_choice` against its `tools`; 400 for one the platform cannot honour."""
    if value is None or value == "auto":
        return Choice()
    if value == "none":
        return Choice(offer=False)
    if value == "required":
        if not tools:
            raise InvalidInput("`tool_choice: required` needs `tools`", code="invalid_value", param=PARAM)
        return Choice(forced="required")
    if isinstance(value, dict) and value.get("type") == "function":
        function = value.get("function")
        name = function.get("name") if isinstance(function, dict) else value.get("name")
        if not isinstance(name, str) or name not in {t.name for t in tools}:
            raise InvalidInput(
                "`tool_choice` must name one of the request's `tools`", code="invalid_value", param=PARAM
            )
        return Choice(forced=name)
    if isinstance(value, str):
        raise InvalidInput(
            "`tool_choice` is `auto`, `none`, `required` or a function", code="invalid_value", param=PARAM
        )
    raise InvalidInput(
        f"`tool_choice` of type {str(value.get('type'))[:40]!r} is not supported: `auto`, `none`, `required` or a "
        "function of the request's `tools`",
        code="unsupported_value",
        param=PARAM,
    )
