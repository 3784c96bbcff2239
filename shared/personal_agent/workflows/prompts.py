"""Prompt templates: the message a triggered run starts with, from the webhook body or the schedule's time.

Placeholders are `{{name}}`: `body` (the request body as text), `body.a.b` (a field of a JSON body; list items
by index), `trigger` (webhook or schedule), `time` (when the delivery arrived, or the scheduled time),
`scheduled_time` (schedules only), `webhook_id` and `workflow_name`. Anything else is refused when the
workflow is saved, so a typo never turns into a silent blank.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from personal_agent.errors import InvalidInput

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)*)\s*\}\}")
NAMES = ("body", "trigger", "time", "scheduled_time", "webhook_id", "workflow_name")
MAX_TEMPLATE_CHARS = 16_000
DEFAULT_TEMPLATE = 'Workflow "{{workflow_name}}" was triggered by a {{trigger}} at {{time}}.\n\n{{body}}'


def validate_template(template: str) -> str:
    """The template if every placeholder is known (422 `unknown_placeholder` otherwise)."""
    if len(template) > MAX_TEMPLATE_CHARS:
        raise InvalidInput(
            f"the prompt template is longer than {MAX_TEMPLATE_CHARS} characters", code="template_too_long"
        )
    if not template.strip():
        raise InvalidInput("the prompt template is empty", code="empty_template")
    for match in PLACEHOLDER.finditer(template):
        root = match.group(1).split(".", 1)[0]
        if root not in NAMES or (root != "body" and "." in match.group(1)):
            raise InvalidInput(
                f"unknown placeholder {{{{{match.group(1)}}}}}; use one of {', '.join(NAMES)} or body.<field>",
                code="unknown_placeholder",
            )
    return template


@dataclass(frozen=True)
class TriggerValues:
    """What a template can use for one delivery."""

    trigger: str
    time: str
    workflow_name: str
    body: str = ""
    scheduled_time: str = ""
    webhook_id: str = ""


def _field(body: str, path: list[str]) -> str:
    try:
        value: Any = json.loads(body)
    except (ValueError, RecursionError):  # webhooks refuse deep JSON first; this keeps a render from ever failing
        return ""
    for key in path:
        if isinstance(value, dict) and key in value:
            value = value[key]
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def render(template: str, values: TriggerValues) -> str:
    """The run's first message: placeholders replaced once (a body containing `{{...}}` stays as it is)."""

    def one(match: re.Match[str]) -> str:
        name, *path = match.group(1).split(".")
        if name == "body" and path:
            return _field(values.body, path)
        return str(getattr(values, name, ""))

    return PLACEHOLDER.sub(one, template).strip()
