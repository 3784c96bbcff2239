"""Every Redis key name the platform uses, in one place."""

from __future__ import annotations

from uuid import UUID


def run_stream(org_id: UUID | str, run_id: UUID | str) -> str:
    """The AG-UI event stream of one run."""
    return f"pa:{org_id}:run:{run_id}"


def feed_stream(org_id: UUID | str, user_id: UUID | str) -> str:
    """A user's feed: runs started and finished in their chats, wherever they were started."""
    return f"pa:{org_id}:feed:{user_id}"


def cancel_flag(run_id: UUID | str) -> str:
    """Set when a run's owner stops it: the engine reads this between stream chunks (the flag in Postgres
    stays the source of truth, read less often)."""
    return f"pa:cancel:{run_id}"


def stream_slots(user_id: UUID | str) -> str:
    """The SSE/AG-UI connections a user holds open, across orgs and tabs (a sorted set of leases)."""
    return f"pa:slots:sse:{user_id}"


def auth_epoch() -> str:
    """Bumped by every change that takes access away (a token revoked, a member offboarded, an account
    disabled): a cached principal from before the bump is never used again, in any process."""
    return "pa:auth:epoch"
