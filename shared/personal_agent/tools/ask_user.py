"""The `ask_user` tool: the model asks the run's person one question, with an optional form (a list of `choices` or
a small JSON `schema`) and a `default` taken when nobody answers in time. The call is deferred (`CallDeferred`): the
run pauses exactly as for an approval (`engine/deferred.py` stores the question in the same wait) and the person's
answer, checked against the form, becomes the call's result when it goes on.

What cannot be asked is the model's to fix (`ModelRetry`): a bad form, a run that acts for nobody, a sub-agent (its
parent asks), or a question beside `delegate` calls in one response. A run whose workflow never waits for people
(`approval_policy: deny`) gets the default at once, or is told to decide by itself."""

from __future__ import annotations

from typing import Any

from pydantic_ai import CallDeferred, ModelRetry, RunContext
from pydantic_ai.messages import ModelResponse

from personal_agent.approvals.question_forms import InvalidForm, build_form
from personal_agent.spec.run_deps import RunDeps
from personal_agent.subagents.specs import DELEGATE_TOOL


def _beside_delegations(ctx: RunContext[RunDeps]) -> bool:
    response = next((m for m in reversed(ctx.messages) if isinstance(m, ModelResponse)), None)
    return response is not None and any(c.tool_name == DELEGATE_TOOL for c in response.tool_calls)


async def ask_user(
    ctx: RunContext[RunDeps],
    question: str,
    choices: list[str] | None = None,
    schema: dict[str, Any] | None = None,
    default: Any = None,
) -> Any:
    """Ask the user one question and wait for the answer (it may take hours). Use it when one fact you cannot find
    or safely assume is missing; never to confirm what you were already asked to do. `choices`: the answers to pick
    from; `schema`: a small JSON Schema the answer must fit (for a structured answer); neither: free text.
    `default`: the answer taken if nobody answers in time."""
    try:
        form = build_form(question, choices, schema, default)
    except InvalidForm as exc:
        raise ModelRetry(str(exc)) from exc
    spec = ctx.deps.spec
    if spec.user_id is None or spec.parent_run_id is not None:
        raise ModelRetry("nobody can be asked from this run: decide with what you have and say what you assumed")
    if spec.approval_policy == "deny":  # a workflow that never waits for people
        if "default" in form:
            return form["default"]
        raise ModelRetry("this run does not wait for people: decide with what you have and say what you assumed")
    if _beside_delegations(ctx):
        raise ModelRetry("ask the user in a response of its own, not beside `delegate` calls")
    raise CallDeferred(metadata={"question": form})
