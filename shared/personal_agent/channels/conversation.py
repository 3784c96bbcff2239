"""An inbound message as a run, and a decision as an answered approval: the one channel layer every channel hands
its verified requests to. A message of a linked member launches through the one chokepoint (`launch_run`,
`trigger_source` the channel, the channel's agent) in the chat of its thread, untrusted unless the channel vouches
for the sender; an unlinked sender gets the connect reply only. A decision is recorded through the same
`approval_decisions.decide` as the web chat's (the member must be allowed to decide it); an e-mail answers only what
it proves it answers (`email_proof`). The runs' answers reach the thread through `followers`."""

from __future__ import annotations

import json
import logging
from typing import Any
from uuid import UUID

from personal_agent.channels import email_files, email_proof, senders, thread_store
from personal_agent.channels.inbound import Decision, Inbound, Replier
from personal_agent.chats import store as chat_store
from personal_agent.db import org_transaction
from personal_agent.errors import AppError
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle import approval_decisions, question_answers
from personal_agent.lifecycle.followup_queue import FollowUpQueued
from personal_agent.lifecycle.launch import LaunchRequest, launch_run
from personal_agent.runs import store as run_store
from personal_agent.spec.labels import Labels
from personal_agent.spec.run_spec import RunSpec
from personal_agent.stream import queued_runs
from personal_agent.stream.queued_runs import Queued
from personal_agent.tools.registry import default_tool_names

log = logging.getLogger("personal_agent.channels")
TITLE_CHARS = 60
QUEUED_TEXT = "Queued: I will answer this when I have finished the reply in progress."


async def _sender(inbound: Inbound | Decision, replier: Replier) -> Principal | None:
    """The linked member (None: they were told how to connect, or why they may not)."""
    try:
        async with org_transaction(inbound.org_id) as conn:
            principal = await senders.member(conn, inbound.org_id, inbound.kind, inbound.sender)
            if principal is None:
                label = inbound.sender_label if isinstance(inbound, Inbound) else ""
                code = await senders.link_code(conn, inbound.org_id, inbound.kind, inbound.sender, label)
                await thread_store.set_status(conn, inbound.kind, inbound.event_id, "unlinked")
    except AppError as exc:  # a disabled or removed member
        await _status(inbound, "refused")
        await replier.notice(senders.refusal_text(exc))
        return None
    if principal is None:
        await replier.notice(senders.connect_text(code))
    return principal


async def _status(inbound: Inbound | Decision, status: str, run_id: UUID | None = None) -> None:
    async with org_transaction(inbound.org_id) as conn:
        await thread_store.set_status(conn, inbound.kind, inbound.event_id, status, run_id)


async def _chat(inbound: Inbound, principal: Principal) -> UUID:
    """The chat of the message's thread, made (titled after the message) the first time."""
    async with org_transaction(inbound.org_id) as conn:
        chat_id = await thread_store.chat_of(conn, inbound.kind, inbound.thread_key)
        if chat_id is None:
            title = " ".join(inbound.text.split())[:TITLE_CHARS] or f"{inbound.kind.capitalize()} conversation"
            chat_id = (await chat_store.insert_chat(conn, inbound.org_id, principal.user_id, title)).id
            await thread_store.bind(conn, inbound.org_id, inbound.kind, inbound.thread_key, chat_id)
    return chat_id


async def launch(inbound: Inbound, principal: Principal, agent: str | None, replier: Replier | None = None) -> RunSpec:
    """The run of a member's message, through the one chokepoint, with the files it carries as the chat's
    attachments (those not taken named in the thread first)."""
    chat_id = await _chat(inbound, principal)
    attached, refused = await email_files.attach(principal, chat_id, inbound.files)
    if (inbound.refused or refused) and replier is not None:
        await replier.notice(email_files.refusal_text([*inbound.refused, *refused]))
    request = LaunchRequest(
        org_id=inbound.org_id,
        user_id=principal.user_id,
        chat_id=chat_id,
        message=inbound.text,
        attachments=attached,
        trigger_source=inbound.kind,
        agent=agent,
        # A person is in the thread to answer: the built-in assistant may ask them (an agent's own tools decide).
        tools=None if agent else (*default_tool_names(), "ask_user"),
        owned_chat=True,
        entered=Labels(untrusted=not inbound.verified_sender),
    )
    return await launch_run(request)


def _answer_value(form: dict[str, Any], text: str) -> Any:
    """A reply's text as the answer a question's form takes (a JSON Schema's value is JSON when it parses)."""
    if "schema" in form:
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text.strip()


async def _answered_question(inbound: Inbound, principal: Principal, replier: Replier) -> tuple[bool, UUID | None]:
    """A message in a thread whose run asks its person a question answers it (the run goes on); whether it was
    taken as an answer (or refused as one), and the run it resumed. (False, None): no question of the thread's chat
    waits for this member."""
    async with org_transaction(inbound.org_id) as conn:
        chat_id = await thread_store.chat_of(conn, inbound.kind, inbound.thread_key)
    if chat_id is None:
        return False, None
    pending = [q for q in await question_answers.list_questions(principal, "pending") if q.chat_id == chat_id]
    if not pending:
        return False, None
    proven = await email_proof.proven(inbound, [q.id for q in pending], replier)
    if not proven:  # an e-mail that is no reply to the question's own mail: told why
        return True, None
    question = [q for q in pending if q.id in proven][-1]  # the oldest first: newest-first list
    try:
        await question_answers.answer_question(principal, question.id, _answer_value(question.args, inbound.text))
    except AppError as exc:  # not an answer the form takes, or answered or expired meanwhile
        await _status(inbound, exc.code)
        await replier.notice(senders.refusal_text(exc))
        return True, None
    await _status(inbound, "answered")
    return True, question.run_id


async def handle_message(inbound: Inbound, replier: Replier, agent: str | None) -> RunSpec | UUID | None:
    """Run a member's message (its run's spec, for the thread's follower), or answer the question the thread's run
    asks (the id of the run the answer resumed); None: nothing ran or went on, and the sender was told why."""
    principal = await _sender(inbound, replier)
    answered, resumed = (False, None) if principal is None else await _answered_question(inbound, principal, replier)
    if principal is None or answered:
        await email_files.discard(inbound.files)
        return resumed
    try:
        spec = await launch(inbound, principal, agent, replier)
    except FollowUpQueued as queued:  # the thread's chat is busy: its policy queued this message
        return await _when_started(inbound, Queued.of(inbound.org_id, queued), replier)
    except AppError as exc:  # `reject` while a run is in progress in the thread, over budget, no model allowed...
        await _status(inbound, exc.code)
        await replier.notice(senders.refusal_text(exc))
        return None
    await _status(inbound, "started", spec.run_id)
    return spec


async def _when_started(inbound: Inbound, queued: Queued, replier: Replier) -> RunSpec | None:
    """A message queued behind the thread's busy run (the chat's `followup_policy`): the thread is told, and the
    message's run, once it starts, is answered into the thread like one launched at once (None: it was cancelled or
    refused before it started, or did not start within the relay's lifetime; the thread is told why)."""
    await _status(inbound, "queued", queued.run_id)
    await replier.notice(QUEUED_TEXT)
    try:
        async for _ in queued_runs.waiting(queued):
            pass
    except AppError as exc:
        await _status(inbound, exc.code)
        await replier.notice(senders.refusal_text(exc))
        return None
    async with org_transaction(inbound.org_id) as conn:
        row = await run_store.get_run(conn, queued.run_id)
    if row is None:
        return None
    await _status(inbound, "started", row.id)
    return RunSpec.model_validate(row.spec)


async def _pending_of_thread(decision: Decision, principal: Principal) -> list[UUID]:
    """The pending approvals of the thread's chat the member may decide (an e-mail reply decides them all)."""
    async with org_transaction(decision.org_id) as conn:
        chat_id = await thread_store.chat_of(conn, decision.kind, decision.thread_key)
    if chat_id is None:
        return []
    pending = await approval_decisions.list_approvals(principal, "pending")
    return [row.id for row in pending if row.chat_id == chat_id]


async def handle_decision(decision: Decision, replier: Replier) -> list[UUID]:
    """Record the member's decision; the runs it decided (resumed once nothing else of their wait is pending)."""
    principal = await _sender(decision, replier)
    if principal is None:
        return []
    ids = [decision.approval_id] if decision.approval_id else await _pending_of_thread(decision, principal)
    if not ids:
        await replier.notice("Nothing in this conversation is waiting for a decision.")
        await _status(decision, "not_decided")
        return []
    ids = await email_proof.proven(decision, ids, replier)
    if not ids:  # an e-mail that is no reply to the approval's own mail: told why, audited
        return []
    runs: list[UUID] = []
    for approval_id in ids:
        try:
            reason = decision.reason or f"in {decision.kind}"
            row = await approval_decisions.decide(principal, approval_id, decision.decision, reason, None)
            runs.append(row.run_id)
        except AppError as exc:  # not theirs to decide (404), already decided or expired (409)
            await replier.notice(senders.refusal_text(exc))
    verb = "approved" if decision.decision == "approve" else "denied"
    await _status(decision, verb if runs else "not_decided")
    if runs:
        why = f": {decision.reason}" if decision.reason else "."
        await replier.notice(f"{verb.capitalize()} by {decision.sender_label or decision.sender}{why}")
    return list(dict.fromkeys(runs))
