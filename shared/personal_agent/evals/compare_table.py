"""Two evaluation runs compared (`reports.compare`'s answer) as a Markdown table, for the API's readers and the
`pa eval compare` CLI alike (nothing here but the text: the CLI, a client of the API, imports no server code)."""

from __future__ import annotations

from typing import Any


def compare_markdown(report: dict[str, Any]) -> str:
    """A comparison (`compare`'s) as Markdown: per case the two scores, whether it changed, and each side's cost and
    latency; then the totals (mean score, summed cost, median latency)."""
    a, b = report["a"]["summary"], report["b"]["summary"]
    lines = [
        "| # | input | A | B | changed | A cost | B cost | A ms | B ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for case in report["cases"]:
        left, right = _cells(case["a"]), _cells(case["b"])
        lines.append(
            f"| {case['position'] + 1} | {case['input'][:60]} | {left[0]} | {right[0]}"
            f" | {'yes' if case['changed'] else ''} | {left[1]} | {right[1]} | {left[2]} | {right[2]} |"
        )
    lines.append(
        f"| | total ({report['changed']} changed) | {a['score']} | {b['score']} | | ${a['cost_usd']:.6f}"
        f" | ${b['cost_usd']:.6f} | {a['latency_ms_p50']} | {b['latency_ms_p50']} |"
    )
    return "\n".join(lines)


def _cells(side: dict[str, Any] | None) -> tuple[str, str, str]:
    """One side of a compared case: its score, cost and latency, or dashes when the other run lacks the case."""
    if side is None:
        return "—", "—", "—"
    return f"{side['score']:.2f}", f"${side['cost_usd']:.6f}", str(side["latency_ms"])
