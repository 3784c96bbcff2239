"""The run's memories as a dynamic part of its instructions, read from the database for every model request
(so a memory deleted in Settings never reaches a later request, even of a run that waited for days)."""

from __future__ import annotations

from pydantic_ai import RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart

from personal_agent.memories.recall import instructions_block, recall
from personal_agent.spec.run_deps import RunDeps


def latest_user_text(messages: list[ModelMessage]) -> str:
    """The text of the newest user turn (its text parts; attachments aside)."""
    for message in reversed(messages):
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                content = part.content
                return content if isinstance(content, str) else " ".join(c for c in content if isinstance(c, str))
    return ""


async def memory_instructions(ctx: RunContext[RunDeps]) -> str | None:
    """The memories of the run's user most relevant to their newest message (None: no user, no memories, or a run
    that does not recall them: a workflow's triggered run whose owner did not opt in)."""
    user_id = ctx.deps.user_id
    if user_id is None or not ctx.deps.spec.recall_memories:
        return None
    tier = ctx.deps.spec.labels.content_tier  # what the run launched with: it counted the memories up to it
    project = ctx.deps.spec.project.id if ctx.deps.spec.project else None  # a project's chat: its memories only
    return instructions_block(await recall(ctx.deps.org_id, user_id, latest_user_text(ctx.messages), tier, project))
