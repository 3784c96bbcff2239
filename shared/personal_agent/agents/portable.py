"""An agent as a portable JSON document (`GET /agents/{id}/export`, `POST /agents/import`): its published
version's fields, tools and delegates by name; no ids, no owner, no secrets."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any
from uuid import UUID

from pydantic import ValidationError

from personal_agent.agents import service
from personal_agent.agents.config import SLUG_PATTERN, AgentConfig
from personal_agent.db import org_transaction
from personal_agent.errors import InvalidInput
from personal_agent.identity.principal import Principal

EXPORT_FORMAT = "personal-agent.agent/v1"


async def export(principal: Principal, agent_id: UUID) -> dict[str, Any]:
    """The agent's published version as a portable document: no ids, no owner, tools and delegates by name."""
    async with org_transaction(principal.org_id) as conn:
        row = await service.visible_row(conn, principal, agent_id)
        published = await service.version_row(conn, row.id, row.published_version)
    config = AgentConfig.model_validate(published.config).model_dump()
    return {"format": EXPORT_FORMAT, "slug": row.slug, **config}


async def import_agent(
    principal: Principal,
    document: dict[str, Any],
    known_tools: Collection[str],
    *,
    slug: str | None = None,
    visibility: str = "private",
) -> dict[str, Any]:
    """A new private agent (or `visibility`) from an exported document (422 for tools this org lacks)."""
    if document.get("format") != EXPORT_FORMAT:
        raise InvalidInput(f"not an agent document (format {EXPORT_FORMAT!r})", code="invalid_agent_document")
    fields = {k: v for k, v in document.items() if k not in ("format", "slug")}
    try:
        config = AgentConfig.model_validate(fields)
    except ValidationError as exc:
        raise InvalidInput(str(exc.errors()[0]["msg"]), code="invalid_agent_document") from exc
    target = slug or document.get("slug")
    if not isinstance(target, str):
        raise InvalidInput("the document names no slug", code="invalid_agent_document")
    if not re.fullmatch(SLUG_PATTERN, target):
        raise InvalidInput("a slug has 2 to 64 lower-case letters, digits and `-`", code="invalid_slug")
    return await service.create(principal, target, visibility, config, known_tools)
