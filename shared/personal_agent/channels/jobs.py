"""After the ack: a verified message or decision is handled in this process (locally, and in tests), or on AWS
handed to an async invoke of the channels function (`PA_CHANNELS_WORKER_FUNCTION`), so every channel's request is
answered within Slack's 3 seconds whatever the run takes. A message's run is followed into its thread
(`followers`); a run that goes on after its follower ended (decided or answered here or in the web chat:
`run_resumed`) is handed on the same way to be followed again."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any
from uuid import UUID

from personal_agent.channels import configs, conversation, followers, reactions, repliers
from personal_agent.channels.config_store import ChannelKind
from personal_agent.channels.inbound import Decision, FollowRun, Inbound, Reaction, Replier
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import RunSpec

log = logging.getLogger("personal_agent.channels")
_running: set[asyncio.Task[None]] = set()
JOB_KEY = "channel_job"


def replier_for(kind: ChannelKind, reply: dict[str, Any], opened: configs.Opened) -> Replier:
    if kind == "slack":
        return repliers.SlackReplier(opened.secrets.get("bot_token", ""), reply)
    if kind == "telegram":
        return repliers.TelegramReplier(opened.secrets.get("bot_token", ""), reply)
    return repliers.EmailReplier(opened.config.external_key, reply, opened.config.org_id)


Item = Inbound | Decision | Reaction | FollowRun


async def process(item: Item) -> None:
    """Handle one message, decision, reaction or run to follow again (its channel's config read again: it may have
    changed since the ack)."""
    opened = await configs.of_org(item.org_id, item.kind)
    if opened is None:
        log.warning("a %s message arrived for a channel since removed", item.kind)
        return
    if isinstance(item, Reaction):  # feedback: nothing is said in the channel
        await reactions.handle_reaction(item)
        return
    if isinstance(item, FollowRun):
        await _follow_again(item, opened)
        return
    replier = replier_for(item.kind, item.reply, opened)
    try:
        if isinstance(item, Decision):
            for run_id in await conversation.handle_decision(item, replier):
                await run_resumed(item.org_id, run_id)
            return
        if item.kind == "telegram":
            addressed_item = await repliers.addressed(item, replier)
            if addressed_item is None:
                return
            item = addressed_item
        outcome = await conversation.handle_message(item, replier, opened.config.agent)
        if isinstance(outcome, RunSpec) and await followers.first(outcome, item.kind, item.reply, replier):
            await dispatch(FollowRun(kind=item.kind, org_id=item.org_id, run_id=outcome.run_id))
        elif isinstance(outcome, UUID):  # a question answered
            await run_resumed(item.org_id, outcome)
    finally:
        await replier.close()


async def _follow_again(item: FollowRun, opened: configs.Opened) -> None:
    """Answer a run that went on into its thread, unless another follower holds it."""
    claimed = await followers.claim(item.org_id, item.run_id)
    if claimed is None:
        return
    follow, spec = claimed
    replier = replier_for(follow.kind, follow.reply, opened)
    try:
        again = await followers.again(spec, follow, replier)
    finally:
        await replier.close()
    if again:
        await dispatch(item)


async def run_resumed(org_id: UUID, run_id: UUID) -> None:
    """A run went on (an approval decided, a question answered: in a channel or in the web chat). When it is a
    channel's and no follower holds its thread, one is started (after the ack: a task here, an async invoke on
    AWS), so the rest of its answer lands in the thread however late the decision came."""
    kind = await followers.wanted(org_id, run_id)
    if kind is not None:
        await dispatch(FollowRun(kind=kind, org_id=org_id, run_id=run_id))


async def _guarded(item: Item) -> None:
    try:
        await process(item)
    except Exception:  # the ack was sent long ago: log, never crash the server
        log.exception("a %s channel message failed", item.kind, extra={"event_id": item.event_id})


_TYPES: dict[str, type[Item]] = {
    "message": Inbound,
    "decision": Decision,
    "reaction": Reaction,
    "follow": FollowRun,
}


def encode(item: Item) -> dict[str, Any]:
    kind = next(name for name, cls in _TYPES.items() if isinstance(item, cls))
    return {JOB_KEY: {"type": kind, **item.model_dump(mode="json")}}


def decode(event: dict[str, Any]) -> Item:
    body = dict(event[JOB_KEY])
    return _TYPES[body.pop("type")].model_validate(body)


def _invoke(function: str, item: Item) -> None:
    from personal_agent.aws_clients import aws_client

    payload = json.dumps(encode(item)).encode()
    aws_client("lambda").invoke(FunctionName=function, InvocationType="Event", Payload=payload)


async def dispatch(item: Item) -> None:
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
