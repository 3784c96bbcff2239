"""Usage from the ledger, grouped by model, chat, user or day."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.usage.report import EXPORT_PAGE_ROWS, usage_report

router = APIRouter(prefix="/api/v1", tags=["usage"])


@router.get(
    "/usage/export",
    operation_id="export_usage",
    responses={200: {"content": {"text/csv": {}}, "headers": {"X-Next-Cursor": {"schema": {"type": "string"}}}}},
)
async def export_usage(
    request: Request,
    principal: CurrentPrincipal,
    start: Annotated[datetime | None, Query(alias="from")] = None,
    end: Annotated[datetime | None, Query(alias="to")] = None,
    scope: Literal["me", "org"] = "me",
    cursor: Annotated[str | None, Query(max_length=512)] = None,
    limit: Annotated[int, Query(ge=1, le=EXPORT_PAGE_ROWS)] = EXPORT_PAGE_ROWS,
) -> Response:
    """Ledger rows in [from, to) as CSV, oldest first, `limit` rows a page (the org's for org admins with
    `scope=org`). When more rows follow, `X-Next-Cursor` and a `Link: rel="next"` header give the next page."""
    from personal_agent.usage.report import usage_csv

    body, following = await usage_csv(principal, start, end, scope, cursor, limit)
    headers = {"Content-Disposition": 'attachment; filename="usage.csv"'}
    if following:
        headers["X-Next-Cursor"] = following
        headers["Link"] = f'<{request.url.include_query_params(cursor=following)}>; rel="next"'
    return Response(body, media_type="text/csv", headers=headers)


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
