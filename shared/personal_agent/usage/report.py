"""Usage reports from the ledger. A user sees their own usage; org admins see the org's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, Literal

from personal_agent.db import org_transaction
from personal_agent.errors import InvalidInput
from personal_agent.identity.principal import Principal
from personal_agent.sandbox import usage_store as sandbox_usage

GroupBy = Literal["model", "chat", "user", "day", "agent"]
_KEYS: dict[str, str] = {
    "model": "model_name",
    "chat": "coalesce(chat_id::text, '-')",
    "user": "coalesce(user_id::text, '-')",
    "day": "to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD')",
    # the slug of the agent the run launched with (its RunSpec); `-`: no agent, or the run is deleted
    "agent": "coalesce((SELECT r.spec->'agent'->>'slug' FROM runs r WHERE r.id = usage_records.run_id), '-')",
}


def _window(
    principal: Principal, start: datetime | None, end: datetime | None, scope: str
) -> tuple[datetime, datetime, list[str], list[Any]]:
    """[from, to) (default: the last 30 days) and the rows the caller may see: their own, or the org's for admins."""
    end = end or datetime.now(UTC)
    start = start or end - timedelta(days=30)
    if start >= end:
        raise InvalidInput("`from` must be before `to`", code="invalid_range")
    clauses = ["created_at >= %s", "created_at < %s"]
    params: list[Any] = [start, end]
    if scope == "me" or not principal.is_org_admin:
        clauses.append("user_id = %s")
        params.append(principal.user_id)
    return start, end, clauses, params


async def usage_report(
    principal: Principal,
    start: datetime | None,
    end: datetime | None,
    group_by: GroupBy,
    scope: Literal["me", "org"] = "me",
) -> dict[str, Any]:
    start, end, clauses, params = _window(principal, start, end, scope)
    key = _KEYS[group_by]
    sql = (
        f"SELECT {key} AS key, count(*) AS requests, sum(input_tokens) AS input_tokens,"
        " sum(output_tokens) AS output_tokens, sum(cost_usd) AS cost_usd,"
        " count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced_requests"
        f" FROM usage_records WHERE {' AND '.join(clauses)} GROUP BY 1 ORDER BY 1"
    )
    async with org_transaction(principal.org_id) as conn:
        cur = await conn.execute(sql, params)
        rows = await cur.fetchall()
        mine = None if scope == "org" and principal.is_org_admin else principal.user_id
        sandbox_seconds = await sandbox_usage.window_seconds(conn, start, end, mine)
    items = [
        {
            "key": r["key"],
            "requests": r["requests"],
            "input_tokens": int(r["input_tokens"] or 0),
            "output_tokens": int(r["output_tokens"] or 0),
            "cost_usd": float(r["cost_usd"]) if r["cost_usd"] is not None else None,
            "unpriced_requests": r["unpriced_requests"],
        }
        for r in rows
    ]
    total = sum(i["cost_usd"] or 0.0 for i in items)
    return {
        "from": start.isoformat(),
        "to": end.isoformat(),
        "group_by": group_by,
        "scope": "org" if scope == "org" and principal.is_org_admin else "me",
        "items": items,
        "total_cost_usd": round(total, 8),
        "unpriced_requests": sum(i["unpriced_requests"] for i in items),
        "sandbox_seconds": sandbox_seconds,
    }


CSV_COLUMNS = (
    "created_at",
    "run_id",
    "request_index",
    "user_id",
    "chat_id",
    "model_name",
    "provider",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "cost_usd",
    "price_version",
)


def csv_cell(value: Any) -> Any:
    """A ledger value as a spreadsheet reads it: an unknown one empty (not zero), a decimal in plain notation
    (`0`, `0.000123`; Postgres' numeric(.., 8) zero would otherwise print as `0E-8`)."""
    if value is None:
        return ""
    if isinstance(value, Decimal):
        return plain_decimal(value)
    return value


def plain_decimal(value: Decimal) -> str:
    """`Decimal("0E-8")` as "0", `Decimal("0.00012300")` as "0.000123": no exponent, no trailing zeros."""
    text = format(value.normalize(), "f")
    return text if text != "-0" else "0"


EXPORT_PAGE_ROWS = 10_000
"""Rows per CSV page: about 2.5 MB, well under Lambda's 6 MB response limit; `next_cursor` fetches the rest."""


async def usage_csv(
    principal: Principal,
    start: datetime | None,
    end: datetime | None,
    scope: Literal["me", "org"] = "me",
    cursor: str | None = None,
    limit: int = EXPORT_PAGE_ROWS,
) -> tuple[str, str | None]:
    """One page of ledger rows as CSV (an unknown cost stays empty, not zero) and the cursor of the next page."""
    import csv
    import io

    from personal_agent.db.keyset import decode_cursor, encode_cursor

    start, end, clauses, params = _window(principal, start, end, scope)
    if cursor:
        at, row_id = decode_cursor(cursor)
        if not row_id.isdigit():
            raise InvalidInput("the cursor is not valid", code="invalid_cursor")
        clauses.append("(created_at, id) > (%s, %s)")
        params += [at, int(row_id)]
    async with org_transaction(principal.org_id) as conn:
        cur = await conn.execute(
            f"SELECT id, {', '.join(CSV_COLUMNS)} FROM usage_records WHERE {' AND '.join(clauses)}"
            " ORDER BY created_at, id LIMIT %s",
            [*params, limit + 1],
        )
        rows = await cur.fetchall()
    more = len(rows) > limit
    rows = rows[:limit]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        writer.writerow([csv_cell(row[c]) for c in CSV_COLUMNS])
    following = encode_cursor(rows[-1]["created_at"], rows[-1]["id"]) if more else None
    return out.getvalue(), following
