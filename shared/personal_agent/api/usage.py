"""Usage from the ledger, grouped by model, chat, user or day."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.usage.report import usage_report

router = APIRouter(prefix="/api/v1", tags=["usage"])


@router.get("/usage/export", operation_id="export_usage", responses={200: {"content": {"text/csv": {}}}})
async def export_usage(
    principal: CurrentPrincipal,
    start: Annotated[datetime | None, Query(alias="from")] = None,
    end: Annotated[datetime | None, Query(alias="to")] = None,
    scope: Literal["me", "org"] = "me",
) -> Response:
    """Every ledger row in [from, to) as CSV (the org's for org admins with `scope=org`)."""
    from personal_agent.usage.report import usage_csv

    body = await usage_csv(principal, start, end, scope)
    return Response(body, media_type="text/csv", headers={"Content-Disposition": 'attachment; filename="usage.csv"'})


@router.get("/usage", operation_id="get_usage")
async def get_usage(
    principal: CurrentPrincipal,
    start: Annotated[datetime | None, Query(alias="from")] = None,
    end: Annotated[datetime | None, Query(alias="to")] = None,
    group_by: Literal["model", "chat", "user", "day"] = "day",
    scope: Literal["me", "org"] = "me",
) -> dict[str, Any]:
    """Spend and tokens in [from, to) (default: the last 30 days); `scope=org` for org admins."""
    return await usage_report(principal, start, end, group_by, scope)
