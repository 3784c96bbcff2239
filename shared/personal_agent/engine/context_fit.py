"""The capability that keeps every model request of a run within its model's context window: it cuts the
request's history (`engine.context_window`), with a summary of the older turns (`engine.summaries`), and notes the
cut on the request (`CONTEXT_CUT` in its metadata, which is never sent to the model but stays in the run's
checkpoints) so the run's trace can show the history as it was sent."""

from __future__ import annotations

from dataclasses import dataclass

from ag_ui.core import CustomEvent
from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage, ModelRequest
from pydantic_ai.models import ModelRequestContext

from personal_agent.engine.context_window import ContextExceeded, overhead, tokens, window_of
from personal_agent.engine.emitter import RunEmitter
from personal_agent.engine.summaries import fit
from personal_agent.spec.run_deps import RunDeps
from personal_agent.spec.run_spec import RunSpec

CONTEXT_CUT = "context_cut"
"""The request's metadata key of its cut: `{dropped, summary_id, tokens, budget}` (`lifecycle/run_trace.py`)."""


@dataclass
class ContextFit(AbstractCapability[RunDeps]):
    """Built with each engine step's agent; reports a new summary on the run's stream (CUSTOM
    `history_summarised`)."""

    spec: RunSpec
    emitter: RunEmitter | None = None

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def before_model_request(
        self, ctx: RunContext[RunDeps], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        messages = list(request_context.messages)
        window, answer = window_of(self.spec)
        budget = window - answer - overhead(request_context)
        size = tokens(messages)
        if size <= budget:
            return request_context
        fitted, event, summary_id = await fit(self.spec, messages, budget)
        if fitted is None:
            raise ContextExceeded(f"the current turn is longer than the model's context window ({window} tokens)")
        _note_cut(messages, len(messages) - len(fitted), summary_id, size, budget)
        if event is not None and self.emitter is not None:
            await self.emitter.emit(CustomEvent(name="history_summarised", value=event))
        request_context.messages = fitted
        return request_context


def _note_cut(messages: list[ModelMessage], dropped: int, summary_id: int | None, size: int, budget: int) -> None:
    """Note on the request being sent (the history's object, so its checkpoints keep it) how many of the history's
    first messages the summary `summary_id` (None: a note that they were left out) stood in for."""
    request = messages[-1]
    if isinstance(request, ModelRequest):
        cut = {"dropped": dropped, "summary_id": summary_id, "tokens": size, "budget": budget}
        request.metadata = {**(request.metadata or {}), CONTEXT_CUT: cut}
