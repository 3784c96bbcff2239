"""After the ack: a verified message or decision is handled in this process (locally, and in tests), or on AWS
handed to an async invoke of the channels function (`PA_CHANNELS_WORKER_FUNCTION`), so every channel's request is
answered within Slack's 3 seconds whatever the run takes."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from personal_agent.channels import configs, conversation, reactions, repliers
from personal_agent.channels.inbound import Decision, Inbound, Reaction, Replier
from personal_agent.settings import get_settings

log = logging.getLogger("personal_agent.channels")
_running: set[asyncio.Task[None]] = set()
JOB_KEY = "channel_job"


def replier_for(item: Inbound | Decision, opened: configs.Opened) -> Replier:
    if item.kind == "slack":
        return repliers.SlackReplier(opened.secrets.get("bot_token", ""), item.reply)
    if item.kind == "telegram":
        return repliers.TelegramReplier(opened.secrets.get("bot_token", ""), item.reply)
    return repliers.EmailReplier(opened.config.external_key, item.reply)


async def process(item: Inbound | Decision | Reaction) -> None:
    """Handle one message, decision or reaction (its channel's config read again: it may have changed since the
    ack)."""
    opened = await configs.of_org(item.org_id, item.kind)
    if opened is None:
        log.warning("a %s message arrived for a channel since removed", item.kind)
        return
    if isinstance(item, Reaction):  # feedback: nothing is said in the channel
        await reactions.handle_reaction(item)
        return
    replier = replier_for(item, opened)
    try:
        if isinstance(item, Decision):
            await conversation.handle_decision(item, replier)
            return
        if item.kind == "telegram":
            addressed_item = await repliers.addressed(item, replier)
            if addressed_item is not None:
                await conversation.handle_message(addressed_item, replier, opened.config.agent)
            return
        await conversation.handle_message(item, replier, opened.config.agent)
    finally:
        await replier.close()


async def _guarded(item: Inbound | Decision | Reaction) -> None:
    try:
        await process(item)
    except Exception:  # the ack was sent long ago: log, never crash the server
        log.exception("a %s channel message failed", item.kind, extra={"event_id": item.event_id})


_TYPES: dict[str, type[Inbound | Decision | Reaction]] = {
    "message": Inbound,
    "decision": Decision,
    "reaction": Reaction,
}


def encode(item: Inbound | Decision | Reaction) -> dict[str, Any]:
    kind = next(name for name, cls in _TYPES.items() if isinstance(item, cls))
    return {JOB_KEY: {"type": kind, **item.model_dump(mode="json")}}


def decode(event: dict[str, Any]) -> Inbound | Decision | Reaction:
    body = dict(event[JOB_KEY])
    return _TYPES[body.pop("type")].model_validate(body)


def _invoke(function: str, item: Inbound | Decision | Reaction) -> None:
    from personal_agent.aws_clients import aws_client

    payload = json.dumps(encode(item)).encode()
    aws_client("lambda").invoke(FunctionName=function, InvocationType="Event", Payload=payload)


async def dispatch(item: Inbound | Decision | Reaction) -> None:
    """Start handling `item` after the ack (never waits for the run)."""
    function = get_settings().channels_worker_function
    if function:
        await asyncio.to_thread(_invoke, function, item)
        return
    task = asyncio.get_running_loop().create_task(_guarded(item))
    _running.add(task)
    task.add_done_callback(_running.discard)


async def run_job(event: dict[str, Any]) -> None:
    """The async invoke's side (the channels function): one handed-over message or decision."""
    await _guarded(decode(event))
