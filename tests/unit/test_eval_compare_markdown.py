"""The comparison's Markdown (`evals.compare_table.compare_markdown`): per case both scores, whether it changed, each
side's cost and latency (dashes for a case the other run lacks), then the totals."""

from __future__ import annotations

from typing import Any

from personal_agent.evals.compare_table import compare_markdown


def test_the_comparison_shows_cost_and_latency_per_case_and_in_total() -> None:
    right = {"score": 1.0, "cost_usd": 0.003, "latency_ms": 120}
    left = {"score": 0.5, "cost_usd": 0.0012, "latency_ms": 340}
    report: dict[str, Any] = {
        "a": {"summary": {"score": 0.5, "cost_usd": 0.0024, "latency_ms_p50": 340}},
        "b": {"summary": {"score": 1.0, "cost_usd": 0.003, "latency_ms_p50": 120}},
        "changed": 1,
        "cases": [
            {"position": 0, "input": "q", "a": left, "b": right, "changed": True},
            {"position": 1, "input": "r", "a": left, "b": None, "changed": False},
        ],
    }
    lines = compare_markdown(report).splitlines()
    assert lines[0] == "| # | input | A | B | changed | A cost | B cost | A ms | B ms |"
    assert lines[2] == "| 1 | q | 0.50 | 1.00 | yes | $0.001200 | $0.003000 | 340 | 120 |"
    assert lines[3] == "| 2 | r | 0.50 | — |  | $0.001200 | — | 340 | — |"
    assert lines[4] == "| | total (1 changed) | 0.5 | 1.0 | | $0.002400 | $0.003000 | 340 | 120 |"
