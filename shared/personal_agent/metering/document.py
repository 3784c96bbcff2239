"""One period's export: JSON Lines for the operator's bucket and the summary its event carries.

Lines, in order: one `period` header, one `usage` line per org and model (tokens and the ledger's cost), one
`runs` line per org (runs, model requests, sandbox calls and seconds, the platform's cost estimate), and one `total`
line. Nothing in it depends on when it was made, so a repeated export writes the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from personal_agent.metering.periods import Period
from personal_agent.metering.platform_cost import PlatformRates

EVENT_USAGE_LINES = 200  # an event stays far under EventBridge's 256 KB; the object always has every line


@dataclass(frozen=True)
class ExportDocument:
    export_id: str
    lines: list[dict[str, Any]]
    totals: dict[str, Any]

    def jsonl(self) -> bytes:
        return "".join(json.dumps(line, sort_keys=True) + "\n" for line in self.lines).encode()


def _money(value: Any) -> float:
    return round(float(value or 0), 8)


def build_document(
    tenant: str,
    stage: str,
    period: Period,
    usage: list[dict[str, Any]],
    runs: list[dict[str, Any]],
    rates: PlatformRates,
    sandbox: Sequence[dict[str, Any]] = (),
) -> ExportDocument:
    """The export of `period` from the ledger's sums per org and model (`usage`) and per org (`runs`, and the sandbox
    meter's `sandbox`)."""
    export_id = hashlib.sha256(f"{tenant}/{stage}/{period.kind}/{period.label}".encode()).hexdigest()[:32]
    head = {"type": "period", "export_id": export_id, "tenant": tenant, "stage": stage, "period": period.kind}
    head |= {"label": period.label, "start": period.start.isoformat(), "end": period.end.isoformat()}
    lines: list[dict[str, Any]] = [head]
    per_org: dict[str, dict[str, Any]] = {}
    for row in usage:
        line = {
            "type": "usage",
            "org": row["org_slug"],
            "org_id": str(row["org_id"]),
            "model": row["model_name"],
            "provider": row["provider"],
            "requests": int(row["requests"]),
            "input_tokens": int(row["input_tokens"]),
            "output_tokens": int(row["output_tokens"]),
            "cache_read_tokens": int(row["cache_read_tokens"]),
            "cache_write_tokens": int(row["cache_write_tokens"]),
            "cost_usd": _money(row["cost_usd"]),
            "unpriced_requests": int(row["unpriced_requests"]),
        }
        lines.append(line)
        org = per_org.setdefault(line["org"], _empty_org(line["org"], line["org_id"]))
        for key in ("requests", "input_tokens", "output_tokens", "unpriced_requests"):
            org[key] += line[key]
        org["cost_usd"] = _money(org["cost_usd"] + line["cost_usd"])
    for row in runs:
        org = per_org.setdefault(row["org_slug"], _empty_org(row["org_slug"], str(row["org_id"])))
        org["runs"], org["durable_runs"] = int(row["runs"]), int(row["durable_runs"])
    for row in sandbox:
        org = per_org.setdefault(row["org_slug"], _empty_org(row["org_slug"], str(row["org_id"])))
        org["sandbox_calls"], org["sandbox_seconds"] = int(row["sandbox_calls"]), _seconds(row["sandbox_seconds"])
    for org in per_org.values():
        org["platform_cost_usd"] = rates.estimate(
            runs=org["runs"],
            durable_runs=org["durable_runs"],
            model_requests=org["requests"],
            output_tokens=org["output_tokens"],
        )
    run_lines = [{"type": "runs", **org} for _, org in sorted(per_org.items())]
    lines.extend(run_lines)
    totals = {key: sum(o[key] for o in per_org.values()) for key in _COUNTS}
    totals |= {key: _money(sum(o[key] for o in per_org.values())) for key in ("cost_usd", "platform_cost_usd")}
    totals["sandbox_seconds"] = _seconds(sum(o["sandbox_seconds"] for o in per_org.values()))
    lines.append({"type": "total", **totals})
    return ExportDocument(export_id, lines, totals)


_COUNTS = ("runs", "durable_runs", "requests", "input_tokens", "output_tokens", "unpriced_requests", "sandbox_calls")


def _seconds(value: Any) -> float:
    return round(float(value or 0), 3)


def _empty_org(slug: str, org_id: str) -> dict[str, Any]:
    return {"org": slug, "org_id": org_id, **dict.fromkeys(_COUNTS, 0), "cost_usd": 0.0, "sandbox_seconds": 0.0}


def event_detail(document: ExportDocument, bucket: str, key: str) -> dict[str, Any]:
    """The bus event's detail: the header, the object's location, the totals, per-org and per-model lines."""
    head, usage = document.lines[0], [line for line in document.lines if line["type"] == "usage"]
    orgs = [line for line in document.lines if line["type"] == "runs"]
    return {
        **{k: v for k, v in head.items() if k != "type"},
        "object": {"bucket": bucket, "key": key},
        "totals": document.totals,
        "orgs": orgs,
        "usage": usage[:EVENT_USAGE_LINES],
        "usage_truncated": len(usage) > EVENT_USAGE_LINES,
    }
