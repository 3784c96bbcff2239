"""The operator's metering export carries the sandbox seconds (issue 40): the meter's rows (`sandbox_usage`, one per
`run_python` call, written in each org's own transaction) summed per org across orgs by the exporter's system
transaction (`pa_metering_sandbox`, migration 0049), and put on each org's `runs` line and in the totals."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from personal_agent.db import org_transaction, system_transaction
from personal_agent.metering import store as metering_store
from personal_agent.metering.document import build_document
from personal_agent.metering.periods import Period
from personal_agent.metering.platform_cost import PlatformRates
from personal_agent.sandbox import usage_store


async def test_each_orgs_sandbox_seconds_are_on_its_runs_line_and_in_the_totals(make_tenant: Any) -> None:
    acme, globex, idle = make_tenant(), make_tenant(), make_tenant()
    for tenant, calls in ((acme, [1.25, 0.5]), (globex, [2.0])):
        async with org_transaction(tenant.org_id) as conn:
            for seconds in calls:
                await usage_store.record(conn, tenant.org_id, tenant.user_id, None, uuid.uuid4(), "lambda", seconds)

    now = datetime.now(UTC)
    period = Period("hour", now - timedelta(hours=1), now + timedelta(minutes=1))
    async with system_transaction() as conn:  # as the exporter reads: no org set, every org's sums
        summed = await metering_store.sandbox_by_org(conn, period)
    mine = [r for r in summed if r["org_id"] in {acme.org_id, globex.org_id, idle.org_id}]
    assert sorted((r["org_slug"], r["sandbox_calls"], float(r["sandbox_seconds"])) for r in mine) == sorted(
        [(acme.slug, 2, 1.75), (globex.slug, 1, 2.0)]
    )  # an org that ran no code has no row

    document = build_document("acme", "prod", period, [], [], PlatformRates(), mine)
    lines = {line["org"]: line for line in document.lines if line["type"] == "runs"}
    assert (lines[acme.slug]["sandbox_calls"], lines[acme.slug]["sandbox_seconds"]) == (2, 1.75)
    assert (lines[globex.slug]["sandbox_calls"], lines[globex.slug]["sandbox_seconds"]) == (1, 2.0)
    assert (document.totals["sandbox_calls"], document.totals["sandbox_seconds"]) == (3, 3.75)
    assert document.lines[-1] == {"type": "total", **document.totals}

    async with org_transaction(acme.org_id) as conn:  # a tenant's own transaction still sees only its own rows
        assert await usage_store.window_seconds(conn, period.start, period.end, None) == 1.75
