"""The capability that keeps every model request of a run within its model's context window: it cuts the
request's history (`engine.context_window`), with a summary of the older turns (`engine.summaries`)."""

from __future__ import annotations

from dataclasses import dataclass

from ag_ui.core import CustomEvent
from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.models import ModelRequestContext

from personal_agent.engine.context_window import ContextExceeded, overhead, tokens, window_of
from personal_agent.engine.emitter import RunEmitter
from personal_agent.engine.summaries import fit
from personal_agent.spec.run_deps import RunDeps
from personal_agent.spec.run_spec import RunSpec


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
        if tokens(messages) <= budget:
            return request_context
        fitted, event = await fit(self.spec, messages, budget)
        if fitted is None:
            raise ContextExceeded(f"the current turn is longer than the model's context window ({window} tokens)")
        if event is not None and self.emitter is not None:
            await self.emitter.emit(CustomEvent(name="history_summarised", value=event))
        request_context.messages = fitted
        return request_context
