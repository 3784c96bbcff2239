"""An org's routing and output settings (`org_settings`). Every call runs inside an org transaction (RLS)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn

COLUMNS = (
    "tier_floor, confidence_threshold, routing_model, default_model, output_email_domains, code_execution,"
    " trace_content"
)


async def get(conn: Conn, org_id: UUID) -> dict[str, Any] | None:
    cur = await conn.execute(f"SELECT {COLUMNS} FROM org_settings WHERE org_id = %s", [org_id])
    return await cur.fetchone()


async def put(conn: Conn, org_id: UUID, values: dict[str, Any]) -> dict[str, Any]:
    """Replace the settings sent; `output_email_domains`, `code_execution` or `trace_content` left out (None) keeps
    the org's."""
    domains = values.get("output_email_domains")
    code_execution = values.get("code_execution")
    trace_content = values.get("trace_content")
    cur = await conn.execute(
        "INSERT INTO org_settings (org_id, tier_floor, confidence_threshold, routing_model, default_model,"
        " output_email_domains, code_execution, trace_content)"
        " VALUES (%s, %s, %s, %s, %s, COALESCE(%s::text[], '{}'), %s, COALESCE(%s::boolean, false))"
        " ON CONFLICT (org_id) DO UPDATE SET tier_floor = EXCLUDED.tier_floor,"
        " confidence_threshold = EXCLUDED.confidence_threshold, routing_model = EXCLUDED.routing_model,"
        " default_model = EXCLUDED.default_model,"
        " output_email_domains = COALESCE(%s::text[], org_settings.output_email_domains),"
        " code_execution = COALESCE(%s::boolean, org_settings.code_execution),"
        " trace_content = COALESCE(%s::boolean, org_settings.trace_content), updated_at = now()"
        f" RETURNING {COLUMNS}",
        [
            org_id,
            values["tier_floor"],
            values["confidence_threshold"],
            values.get("routing_model"),
            values.get("default_model"),
            domains,
            code_execution,
            trace_content,
            domains,
            code_execution,
            trace_content,
        ],
    )
    row = await cur.fetchone()
    assert row is not None
    return row
