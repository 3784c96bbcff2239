"""A thumb on an answer the agent posted in a channel is feedback on that answer's run, from the member the reacting
account is linked to (`evals.feedback`, one rating per person and answer like the web chat's). An unlinked account,
a member the channel is closed to, or a message the agent did not post: nothing happens and nothing is said (a
reaction is not a message to answer)."""

from __future__ import annotations

import logging

from personal_agent.channels import post_store, senders, thread_store
from personal_agent.channels.inbound import Reaction
from personal_agent.db import org_transaction
from personal_agent.errors import AppError
from personal_agent.evals import feedback

log = logging.getLogger("personal_agent.channels")


async def handle_reaction(reaction: Reaction) -> str:
    """Rate (or take back the rating of) the reacted-to answer's run; what came of it (the channel log's status)."""
    try:
        async with org_transaction(reaction.org_id) as conn:
            principal = await senders.member(conn, reaction.org_id, reaction.kind, reaction.sender)
            run_id = await post_store.run_of(conn, reaction.kind, reaction.message_key)
    except AppError:  # a disabled member, or one the channel is closed to
        principal, run_id = None, None
    if principal is None:
        status = "unlinked"
    elif run_id is None:
        status = "not_an_answer"
    elif reaction.rating is not None:
        rated = await feedback.rate_seen(principal, run_id, reaction.rating)
        status = "rated" if rated else "not_an_answer"
    else:
        assert reaction.taken_back is not None
        status = "unrated" if await feedback.take_back(principal, run_id, reaction.taken_back) else "not_rated"
    async with org_transaction(reaction.org_id) as conn:
        await thread_store.set_status(conn, reaction.kind, reaction.event_id, status, run_id)
    return status
