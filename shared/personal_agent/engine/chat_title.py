"""A new chat's title, set when its first run ends (called by `engine/finish.py` before the terminal event, so the
web chat's list shows it when it reloads the chat on RUN_FINISHED). No model call here: the routing model named
the request when it classified it (`governance/routing.py`, stored on the run); without one, the title is made
offline (`chats/titles.py`: the demo model's for the offline demo, else the request's first words). One UPDATE
that only replaces the default title, off the token stream; it never fails the run."""

from __future__ import annotations

import logging
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart

from personal_agent.chats import store as chat_store
from personal_agent.chats.titles import DEFAULT_TITLE, clean_title, demo_title, first_words_title
from personal_agent.db import org_transaction
from personal_agent.runs import store
from personal_agent.spec.run_spec import RunSpec

log = logging.getLogger(__name__)


def first_request(messages: list[ModelMessage]) -> str:
    """The text of the first user message of the run's messages."""
    for message in messages:
        for part in message.parts if isinstance(message, ModelRequest) else ():
            if isinstance(part, UserPromptPart):
                content = part.content
                return content if isinstance(content, str) else " ".join(c for c in content if isinstance(c, str))
    return ""


def title_for(spec: RunSpec, request: str, routing: dict[str, Any] | None) -> str | None:
    """The routing model's title for the request, else the offline one."""
    routed = clean_title(str(routing.get("title") or "")) if isinstance(routing, dict) else None
    if routed:
        return routed
    offline_demo = bool(spec.model_chain) and spec.model_chain[0].kind == "offline"
    return demo_title(request) if offline_demo else first_words_title(request)


async def name_new_chat(spec: RunSpec, status: str, messages: list[ModelMessage]) -> bool:
    """Title the run's chat if it still has the default title (a run a person or a trigger started, that
    succeeded); whether it did. Errors are logged, never raised."""
    if status != "succeeded" or spec.parent_run_id is not None:
        return False
    try:
        request = first_request(messages)
        async with org_transaction(spec.org_id) as conn:
            run = await store.get_run(conn, spec.run_id)
            title = title_for(spec, request, run.routing if run else None)
            if not title:
                return False
            return await chat_store.set_default_title(conn, spec.chat_id, title, DEFAULT_TITLE)
    except Exception:  # a title is a nicety: the run's end goes on without one
        log.warning("the chat was not titled", extra={"run_id": str(spec.run_id)}, exc_info=True)
        return False
