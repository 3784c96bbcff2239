"""Usage from the ledger, grouped by model, chat, user or day."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, Field

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.usage.report import EXPORT_PAGE_ROWS, usage_report

router = APIRouter(prefix="/api/v1", tags=["usage"])
CSV_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "ledger rows as CSV, a header line first",
        "content": {"text/csv": {"schema": {"type": "string"}}},
        "headers": {"X-Next-Cursor": {"schema": {"type": "string"}, "description": "the next page's cursor"}},
    }
}


class UsageRow(BaseModel):
    key: str = Field(description="the model, chat id, user id or UTC day (`YYYY-MM-DD`) the row groups")
    requests: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None = Field(description="null when none of the group's requests could be priced")
    unpriced_requests: int


class UsageReport(BaseModel):
    start: datetime = Field(alias="from")
    end: datetime = Field(alias="to")
    group_by: Literal["model", "chat", "user", "day", "agent"]
    scope: Literal["me", "org"]
    items: list[UsageRow]
    total_cost_usd: float
    unpriced_requests: int
    sandbox_seconds: float = Field(0.0, description="seconds `run_python` held a sandbox in the window (same scope)")


@router.get(
    "/usage/export",
    operation_id="export_usage",
    response_class=Response,
    responses=CSV_RESPONSE,
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


@router.get("/usage", operation_id="get_usage", response_model=UsageReport)
async def get_usage(
    principal: CurrentPrincipal,
    start: Annotated[datetime | None, Query(alias="from")] = None,
    end: Annotated[datetime | None, Query(alias="to")] = None,
    group_by: Literal["model", "chat", "user", "day", "agent"] = "day",
    scope: Literal["me", "org"] = "me",
) -> dict[str, Any]:
    """Spend and tokens in [from, to) (default: the last 30 days); `scope=org` for org admins."""
    return await usage_report(principal, start, end, group_by, scope)
