"""Whether a run is offered `run_python`: a sandbox is available in this deployment (never unconfined) and the org
enabled code execution (or, not having chosen, the deployment's default: on for `pa dev`, off on AWS)."""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from personal_agent.db.pool import Conn
from personal_agent.errors import AppError
from personal_agent.sandbox import sessions, usage_store
from personal_agent.spec.run_spec import ToolRef

TOOL = "run_python"


async def enabled(conn: Conn, org_id: UUID) -> bool:
    """A sandbox is available here, and the org enabled code execution (or left the deployment's default on)."""
    if not sessions.availability().ok:
        return False
    choice = await usage_store.org_choice(conn, org_id)
    return sessions.config().default_enabled if choice is None else choice


async def offered_tools(
    conn: Conn,
    org_id: UUID,
    tools: tuple[ToolRef, ...],
    named: tuple[str, ...] | None,
    agent_tools: Sequence[str] | None,
) -> tuple[ToolRef, ...]:
    """The tools without `run_python` where the org does not offer it. A request that named it itself (not through
    its agent's list) is refused with 403 `code_execution_disabled`; otherwise it is left out quietly."""
    if not any(t.name == TOOL for t in tools) or await enabled(conn, org_id):
        return tools
    if named is not None and TOOL in named and TOOL not in (agent_tools or ()):
        raise AppError(
            "code execution is not enabled for this organisation (an org admin turns it on in the org settings)",
            code="code_execution_disabled",
            status=403,
        )
    return tuple(t for t in tools if t.name != TOOL)
