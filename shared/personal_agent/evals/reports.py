"""Evaluation runs for the API: start one (202), its status with per-case results and a summary, and two runs
side by side (score, cost and latency per case and in total, the cases whose score changed), and that comparison as
a Markdown table (`compare_table`)."""

from __future__ import annotations

from dataclasses import asdict
from decimal import Decimal
from statistics import median
from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.errors import InvalidInput, NotFound
from personal_agent.evals import case_store, dataset_store, progress, run_store, scorers
from personal_agent.identity.principal import Principal


async def start(principal: Principal, new: run_store.NewEvalRun) -> dict[str, Any]:
    if new.agent is None and new.model is None:
        raise InvalidInput("name an `agent` (and `version`) or a `model` to evaluate", code="eval_target_missing")
    scorers.validate(new.scorers)
    async with org_transaction(principal.org_id) as conn:
        dataset = await dataset_store.get_dataset(conn, new.dataset_id)
        if dataset is None:
            raise NotFound("dataset not found", code="dataset_not_found")
        if dataset.cases == 0:
            raise InvalidInput("the dataset has no cases", code="dataset_empty")
        row = await run_store.insert_eval_run(conn, principal.org_id, principal.user_id, new)
        await case_store.add_pending(
            conn, principal.org_id, row.id, [c.id for c in await dataset_store.cases(conn, row.dataset_id)]
        )
    status = await progress.advance(principal.org_id, row.id)  # its first cases launched; their ends do the rest
    return {"id": row.id, "status": status or row.status, "status_url": f"/api/v1/evals/runs/{row.id}"}


async def view(principal: Principal, eval_run_id: UUID) -> dict[str, Any]:
    async with org_transaction(principal.org_id) as conn:
        row = await run_store.get_run(conn, eval_run_id)
        if row is None:
            raise NotFound("evaluation run not found", code="eval_run_not_found")
        results = await run_store.results(conn, eval_run_id)
        dataset = await dataset_store.get_dataset(conn, row.dataset_id)
    return {
        **_run_view(row),
        "summary": summary(results, dataset.cases if dataset else len(results)),
        "cases": [_result_view(r) for r in results],
    }


async def listed(principal: Principal, limit: int) -> list[dict[str, Any]]:
    async with org_transaction(principal.org_id) as conn:
        return [_run_view(row) for row in await run_store.list_runs(conn, limit)]


def _run_view(row: run_store.EvalRunRow) -> dict[str, Any]:
    view = asdict(row)
    view["budget_usd"] = float(row.budget_usd)
    return view


def _result_view(row: run_store.ResultRow) -> dict[str, Any]:
    return {**asdict(row), "cost_usd": float(row.cost_usd)}


def summary(results: list[run_store.ResultRow], total_cases: int) -> dict[str, Any]:
    """The mean score over the cases done, their total cost, the median latency, how many were done of all."""
    return {
        "score": round(sum(r.score for r in results) / len(results), 4) if results else None,
        "cost_usd": float(sum((r.cost_usd for r in results), Decimal(0))),
        "latency_ms_p50": int(median(r.latency_ms for r in results)) if results else None,
        "cases_done": len(results),
        "cases_total": total_cases,
    }


async def compare(principal: Principal, a: UUID, b: UUID) -> dict[str, Any]:
    """Two evaluation runs of the same dataset side by side; 422 `different_datasets` otherwise."""
    left, right = await view(principal, a), await view(principal, b)
    if left["dataset_id"] != right["dataset_id"]:
        raise InvalidInput("compare two evaluations of the same dataset", code="different_datasets")
    by_case = {c["case_id"]: c for c in right["cases"]}
    rows = []
    for case in left["cases"]:
        other = by_case.get(case["case_id"])
        rows.append(
            {
                "case_id": case["case_id"],
                "position": case["position"],
                "input": case["input"],
                "a": _side(case),
                "b": _side(other) if other else None,
                "changed": other is not None and other["score"] != case["score"],
            }
        )
    return {"a": _head(left), "b": _head(right), "cases": rows, "changed": sum(1 for r in rows if r["changed"])}


def _head(run: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "agent", "version", "model", "status", "summary")
    return {k: run[k] for k in keys}


def _side(case: dict[str, Any]) -> dict[str, Any]:
    keys = ("score", "cost_usd", "latency_ms", "answer", "status", "run_id")
    return {k: case[k] for k in keys}
