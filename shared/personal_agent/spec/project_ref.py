"""The project a run's chat is in, as the RunSpec holds it (migration 0041)."""

from __future__ import annotations

from uuid import UUID

from pydantic import BaseModel, ConfigDict


class ProjectRef(BaseModel):
    """The chat's project at launch: its collection is searched, its memories are the run's scope."""

    model_config = ConfigDict(frozen=True)

    id: UUID
    name: str
    collection_id: UUID | None = None
