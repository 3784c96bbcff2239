"""What a run's agent gets from its user beyond the spec: their memories in its instructions (re-read for each
model request) and the files of their messages as model content (swapped in per request)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from personal_agent.attachments.model_content import AttachmentContent
from personal_agent.memories.instructions import memory_instructions
from personal_agent.spec.run_spec import RunSpec


def run_instructions(spec: RunSpec) -> Sequence[Any]:
    """The spec's instructions, then the user's memories."""
    return [*([spec.instructions] if spec.instructions else []), memory_instructions]


def run_capabilities() -> list[Any]:
    return [AttachmentContent()]
