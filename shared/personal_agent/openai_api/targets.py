"""What a `/v1` `model` names: an agent (its slug) or a model the caller may use directly (`provider:model`, or
`auto`) through the org's built-in agent; and `GET /v1/models`, the list of both in OpenAI's shape."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from personal_agent.agents import service as agents
from personal_agent.agents.config import BUILTIN_SLUG, SLUG_PATTERN
from personal_agent.db import org_transaction
from personal_agent.errors import NotFound
from personal_agent.governance.candidates import candidates, read_org_settings
from personal_agent.governance.selection import rank
from personal_agent.identity.principal import Principal

OWNED_BY = "personal-agent"


@dataclass(frozen=True)
class Target:
    """The agent a `/v1` request runs, and the model it asked for (None: the agent's own)."""

    agent: str
    model: str | None = None


def _not_found(name: str) -> NotFound:
    return NotFound(f"The model `{name}` does not exist or you do not have access to it.", code="model_not_found")


async def resolve(principal: Principal, name: str) -> Target:
    """The target `name` means for this caller; 404 `model_not_found` for anything they cannot use."""
    if name == "auto" or ":" in name:
        if name != "auto" and name not in {m.id for m in await _direct_models(principal)}:
            raise _not_found(name)
        return Target(BUILTIN_SLUG, name)
    if not re.fullmatch(SLUG_PATTERN, name):
        raise _not_found(name)
    try:
        await agents.resolve_slug(principal, name)
    except NotFound as exc:
        raise _not_found(name) from exc
    return Target(name)


async def _direct_models(principal: Principal) -> list[Any]:
    """The org's models that pass its tier floor, best first."""
    async with org_transaction(principal.org_id) as conn:
        floor = int((await read_org_settings(conn, principal.org_id))["tier_floor"])
    return list(rank(await candidates(principal.org_id), floor))


async def model_list(principal: Principal) -> dict[str, Any]:
    """`GET /v1/models`: the caller's agents (id = slug), then `auto` and the models they may name directly."""
    data = [
        {"id": a["slug"], "object": "model", "created": int(a["created_at"].timestamp()), "owned_by": OWNED_BY}
        for a in await agents.list_agents(principal)
        if a["published_version"]
    ]
    data.append({"id": "auto", "object": "model", "created": 0, "owned_by": OWNED_BY})
    data += [
        {"id": m.id, "object": "model", "created": 0, "owned_by": m.provider} for m in await _direct_models(principal)
    ]
    return {"object": "list", "data": data}
