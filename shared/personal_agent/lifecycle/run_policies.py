"""What a launch freezes into the RunSpec of the org's tool rules and the run's review mode (the stricter of its
chat's and its agent's), with the caller's role the rules read. Read in the launch's transaction."""

from __future__ import annotations

from uuid import UUID

from personal_agent.agents.service import LaunchAgent
from personal_agent.chats import store as chat_store
from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.errors import NotFound
from personal_agent.governance.tool_policies import snapshot
from personal_agent.identity import membership_store
from personal_agent.settings import get_settings
from personal_agent.spec.tool_policy import ReviewMode, ToolPolicy

STRICTNESS: tuple[ReviewMode, ...] = ("autonomous", "judge", "approve_each")
"""Review modes from the least to the most a person is involved: a chat can make its agent's stricter only."""
ROLE_ORDER = ("user", "org-admin", "admin")


def stricter(*modes: str | None) -> ReviewMode:
    return max((m for m in modes if m in STRICTNESS), key=STRICTNESS.index, default="autonomous")


async def _role(conn: Conn, org_id: UUID, user_id: UUID | None) -> str:
    """The caller's highest role in the org (`user` for a run nobody started)."""
    if user_id is None:
        return "user"
    membership = await membership_store.roles_and_status(conn, org_id, user_id)
    roles = set(membership["roles"] if membership else [])
    return max((r for r in ROLE_ORDER if r in roles), key=ROLE_ORDER.index, default="user")


async def launch_policy(
    conn: Conn, org_id: UUID, user_id: UUID | None, chat_id: UUID, agent: LaunchAgent | None
) -> ToolPolicy:
    """The run's `tool_policy` for its RunSpec."""
    escalation = get_settings().approval_escalation_seconds
    return ToolPolicy(
        rules=await snapshot(conn),
        review_mode=stricter(await chat_store.review_mode(conn, chat_id), agent.config.review_mode if agent else None),
        user_role=await _role(conn, org_id, user_id),
        escalation_seconds=escalation or None,
    )


async def set_chat_review_mode(org_id: UUID, user_id: UUID, chat_id: UUID, mode: ReviewMode | None) -> None:
    """Set the review mode of the user's chat (404 `chat_not_found` for a chat that is not theirs)."""
    async with org_transaction(org_id) as conn:
        if not await chat_store.set_review_mode(conn, chat_id, user_id, mode):
            raise NotFound("chat not found", code="chat_not_found")
