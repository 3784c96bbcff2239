"""The usage CSV export comes in pages (Lambda answers at most 6 MB): every ledger row exactly once, in order,
with `X-Next-Cursor` and `Link: rel="next"` while more rows follow."""

from __future__ import annotations

import csv
import io
import uuid
from typing import Any

import httpx
import psycopg

from tests.auth import auth_headers


def _seed_usage(admin_url: str, tenant: Any, rows: int) -> str:
    """Ledger rows for one run of `tenant` (the ledger keeps no reference to the run)."""
    run_id = str(uuid.uuid4())
    with psycopg.connect(admin_url, autocommit=True) as conn:
        for index in range(rows):
            conn.execute(
                "INSERT INTO usage_records (org_id, run_id, request_index, user_id, model_name, input_tokens,"
                " output_tokens, cost_usd, created_at) VALUES (%s, %s, %s, %s, 'm', 10, 5, 0.001,"
                " now() - interval '1 hour' + %s * interval '1 second')",
                [tenant.org_id, run_id, index, tenant.user_id, index // 2],  # pairs share a timestamp
            )
    return run_id


async def test_the_export_pages_through_every_row_once(
    http: httpx.AsyncClient, make_tenant: Any, admin_url: str
) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    run_id = _seed_usage(admin_url, tenant, 7)
    seen: list[int] = []
    url: str | None = "/api/v1/usage/export?limit=3"
    pages = 0
    while url:
        page = await http.get(url, headers=headers)
        assert page.status_code == 200, page.text
        rows = list(csv.DictReader(io.StringIO(page.text)))
        assert all(r["run_id"] == run_id for r in rows)
        seen += [int(r["request_index"]) for r in rows]
        pages += 1
        following = page.headers.get("x-next-cursor")
        assert (following is None) == ("link" not in page.headers)
        url = f"/api/v1/usage/export?limit=3&cursor={following}" if following else None
    assert seen == list(range(7)) and pages == 3


async def test_a_forged_export_cursor_is_a_422(http: httpx.AsyncClient, make_tenant: Any) -> None:
    headers = auth_headers(make_tenant())
    for cursor in ("not-base64!", "WyJ4IiwgIjEiXQ==", "WyIyMDMwLTAxLTAxVDAwOjAwOjAwKzAwOjAwIiwgIngiXQ=="):
        answer = await http.get(f"/api/v1/usage/export?cursor={cursor}", headers=headers)
        assert (answer.status_code, answer.json()["code"]) == (422, "invalid_cursor")
