"""A case's scores from its run's outcome: each pure scorer's (`evals.scorers`), and what an LLM judge is asked
(its rubric, the reference, the answer) and told to reply (`SCORE: n`)."""

from __future__ import annotations

from typing import Any

from personal_agent.evals import scorers
from personal_agent.evals.case_runs import Outcome
from personal_agent.evals.dataset_store import CaseRow

JUDGE_INSTRUCTIONS = (
    "You grade an assistant's answer. Read the question, the criteria and the reference answer when given, then "
    "the answer. Reply with one line `SCORE: n` where n is 0 (wrong) to 10 (fully meets the criteria), then one "
    "short sentence saying why."
)


def pure_scores(chosen: list[dict[str, Any]], case: CaseRow, outcome: Outcome) -> dict[str, float]:
    """Each scorer's score but the judge's (a scorer with nothing to compare is left out); every scorer 0 when
    the run did not succeed."""
    if outcome.status != "succeeded":
        return {scorer["kind"]: 0.0 for scorer in chosen}
    answered = scorers.Answered(
        outcome.answer, outcome.tool_calls, outcome.latency_ms, float(outcome.cost_usd), outcome.passages
    )
    found = {
        scorer["kind"]: scorers.score(scorer, answered, case.expected) for scorer in chosen if scorer["kind"] != "judge"
    }
    return {kind: value for kind, value in found.items() if value is not None}


def judge_prompt(question: str, criteria: str | None, expected: str | None, answer: str) -> str:
    parts = [f"Question:\n{question}"]
    if criteria:
        parts.append(f"Criteria:\n{criteria}")
    if expected:
        parts.append(f"Reference answer:\n{expected}")
    parts.append(f"Answer:\n{answer}")
    return "\n\n".join(parts)
