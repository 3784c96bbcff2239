"""What a test simulates in the database that no API or store does: time passing, a worker dying, another process
acting, and a row changed behind the API's back (a bug, a restored backup, hand-written SQL). Tests set state
through the API or the stores; these are the only writes they make by hand, each named for what it simulates
(`tests/unit/test_sql_in_stores.py` keeps the rest of `tests/` free of write SQL)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import psycopg

Id = UUID | str


def _write(admin_url: str, sql: str, params: list[Any]) -> int:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        return conn.execute(sql, params).rowcount


# ---- time passes ----


def expire_token(admin_url: str, token_id: Id) -> None:
    """The personal access token's lifetime ran out."""
    _write(admin_url, "UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE id = %s", [token_id])


def expire_reservations(admin_url: str, run_id: Id) -> None:
    """The run's budget reservations outlived PA_BUDGET_RESERVATION_TTL_SECONDS (their worker never settled them)."""
    _write(
        admin_url, "UPDATE budget_reservations SET expires_at = now() - interval '1 second' WHERE run_id = %s", [run_id]
    )


def expire_approval_wait(admin_url: str, run_id: Id) -> None:
    """The run's approval wait ran out."""
    _write(admin_url, "UPDATE approvals SET expires_at = now() - interval '1 second' WHERE run_id = %s", [run_id])


def approval_escalation_due(admin_url: str, run_id: Id) -> None:
    """Nobody decided the run's pending approvals within PA_APPROVAL_ESCALATION_SECONDS."""
    _write(
        admin_url,
        "UPDATE approvals SET escalate_at = now() - interval '1 second' WHERE run_id = %s AND status = 'pending'",
        [run_id],
    )


# ---- a worker dies, another process acts ----


def hold_lease(admin_url: str, run_id: Id, owner: str, *, minutes: int) -> None:
    """The run's lease as `owner` left it: live for `minutes` more, or expired that long ago when negative."""
    _write(
        admin_url,
        "UPDATE runs SET lease_owner = %s, lease_expires_at = now() + %s * interval '1 minute' WHERE id = %s",
        [owner, minutes, run_id],
    )


def take_lease_elsewhere(admin_url: str, run_id: Id, owner: str) -> None:
    """Another worker took the run over (its lease changed hands without this worker's heartbeat knowing)."""
    _write(admin_url, "UPDATE runs SET lease_owner = %s WHERE id = %s", [owner, run_id])


def mark_running_again(admin_url: str, run_id: Id, *, drop_after_seq: int | None = None) -> None:
    """The run as a Task that died before it finished leaves it: still `running`; with `drop_after_seq`, its
    checkpoints after that one were never written (a retried step replays from there)."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if drop_after_seq is not None:
            conn.execute("DELETE FROM run_checkpoints WHERE run_id = %s AND seq > %s", [run_id, drop_after_seq])
        conn.execute("UPDATE runs SET status = 'running' WHERE id = %s", [run_id])


def drop_final_response(admin_url: str, run_id: Id) -> None:
    """The run's last model response was never stored (the Task died before its checkpoint)."""
    _write(admin_url, "DELETE FROM messages WHERE run_id = %s AND kind = 'response'", [run_id])


def end_run_behind_its_back(admin_url: str, run_id: Id, status: str) -> None:
    """The run ended by a path that skipped the approvals' cleanup (a row stored before that rule existed)."""
    _write(admin_url, "UPDATE runs SET status = %s, finished_at = now() WHERE id = %s", [status, run_id])


def set_membership_elsewhere(admin_url: str, org_id: Id, user_id: Id, status: str) -> None:
    """Another API process changed the membership (it committed; this process's cache has not heard yet)."""
    _write(
        admin_url, "UPDATE memberships SET status = %s WHERE org_id = %s AND user_id = %s", [status, org_id, user_id]
    )


# ---- a row changed behind the API's back (a bug, a restored backup, hand-written SQL) ----


def move_provider(admin_url: str, org_id: Id, base_url: str) -> None:
    """The org's providers and their keys' recorded endpoints point at `base_url`, without the API's checks."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("UPDATE providers SET base_url = %s WHERE org_id = %s", [base_url, org_id])
        conn.execute(
            "UPDATE provider_keys SET endpoint = %s WHERE org_id = %s", [f"openai-compatible:{base_url}", org_id]
        )


def move_mcp_server(
    admin_url: str, server_id: Id, *, url: str | None = None, headers_origin: str | None = None
) -> None:
    """The MCP server row's address (and, with `headers_origin`, its headers' recorded origin) changed by hand."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if url is not None:
            conn.execute("UPDATE mcp_servers SET url = %s WHERE id = %s", [url, server_id])
        if headers_origin is not None:
            conn.execute("UPDATE mcp_servers SET headers_origin = %s WHERE id = %s", [headers_origin, server_id])


def name_user(admin_url: str, subject: str, display_name: str) -> None:
    """Give a user the display name their identity provider would have (dev tokens carry none)."""
    _write(admin_url, "UPDATE users SET display_name = %s WHERE subject = %s", [display_name, subject])
