"""`RunDeps`: what every tool of a run gets as pydantic-ai `deps` (`ctx: RunContext[RunDeps]`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.settings import Settings, get_settings
from personal_agent.spec.run_spec import RunSpec, ToolRef


@dataclass(frozen=True)
class RunDeps:
    """Who runs, which run, its frozen spec, the settings, and the run's database; built once per engine step."""

    org_id: UUID
    user_id: UUID | None
    run_id: UUID
    spec: RunSpec
    settings: Settings
    db: Callable[[], AbstractAsyncContextManager[Conn]]
    """A transaction scoped to the run's org (RLS): `async with ctx.deps.db() as conn: ...`."""
    routing: dict[str, Any] | None = None
    """The router's classification of the run's request (the confidence gate reads it); None when it failed."""

    @classmethod
    def for_run(cls, spec: RunSpec, routing: dict[str, Any] | None) -> RunDeps:
        return cls(
            org_id=spec.org_id,
            user_id=spec.user_id,
            run_id=spec.run_id,
            spec=spec,
            settings=get_settings(),
            db=functools.partial(org_transaction, spec.org_id),
            routing=routing,
        )

    def tool_ref(self, name: str) -> ToolRef | None:
        """The tool as the run's spec snapshotted it at launch."""
        return next((ref for ref in self.spec.tools if ref.name == name), None)
