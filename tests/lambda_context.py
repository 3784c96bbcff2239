"""A fake Lambda context and the event JSON under tests/events/, for calling handlers as Lambda would."""

from __future__ import annotations

import copy
import json
import uuid
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

EVENTS = Path(__file__).parent / "events"


@dataclass
class FakeLambdaContext:
    """What the Lambda runtime passes as `context`: the attributes Powertools and Mangum read."""

    function_name: str = "personal-agent-test"
    memory_limit_in_mb: int = 1024
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"
    log_group_name: str = "/aws/lambda/personal-agent-test"
    log_stream_name: str = "2025/01/01/[$LATEST]0123456789abcdef"
    remaining_ms: int = 29_000

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:us-east-1:123456789012:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


@cache
def _read(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return data


def load_event(name: str) -> dict[str, Any]:
    """A fresh copy of tests/events/`name` (handlers may mutate what they get)."""
    return copy.deepcopy(_read(name))
