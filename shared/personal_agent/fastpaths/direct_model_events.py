"""Fast path: the events of one streamed model request, read as the engine reads them.

Reads pydantic-ai's `AgentStream` internals (`_raw_stream_response`, `_root_capability`, `_events_iterator`,
`_usage_limits`). The `AgentStream` hands every model chunk through its capability chain: an anyio lock and
cancel scope per pull, twice, plus the run-event dispatch and the usage-limit check. None of that does anything
for a run whose capabilities neither watch (`on_event`), wrap (`wrap_run_event_stream`) nor can cut short
(`wrap_model_request`) the stream, and the engine sets no token limits. For such a run the events are read
straight from the model's `StreamedResponse`, which the `AgentStream` would iterate anyway (the same iterator, so
the same events, `FinalResultEvent` included, and the same finished response), and then from the `AgentStream`
itself, which gives whatever tools or capabilities put in the run's event buffer and ends, its model stream spent.

Any other run, or a pydantic-ai whose `AgentStream` lacks the attributes read here, gets the `AgentStream`
(`tests/unit/test_fastpaths.py` notices). Either way the stream's pulls take no event-loop round trip of their
own (`stream_pull_lock`, installed on import).
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from typing import Any

from pydantic_ai.messages import AgentStreamEvent

from personal_agent.fastpaths import stream_pull_lock

stream_pull_lock.install()


def _stream_untouched(root: Any) -> bool:
    """No capability of the run sees, changes or can stop the run's event stream."""
    return not (
        getattr(root, "has_wrap_run_event_stream", True)
        or getattr(root, "has_on_event", True)
        or getattr(root, "_has_wrap_model_request", True)
    )


def request_events(stream: Any) -> tuple[AsyncIterable[AgentStreamEvent], ...]:
    """The iterables to read one after another for every event of `stream` (an open `AgentStream`)."""
    raw = getattr(stream, "_raw_stream_response", None)
    root = getattr(stream, "_root_capability", None)
    if raw is None or root is None or getattr(stream, "_events_iterator", True) is not None:
        return (stream,)
    if not _stream_untouched(root) or _limits_tokens(getattr(stream, "_usage_limits", True)):
        return (stream,)
    return (raw, stream)


def _limits_tokens(limits: Any) -> bool:
    """The run's usage limits would be checked per event (any token limit set)."""
    if limits is None:
        return False
    has_token_limits = getattr(limits, "has_token_limits", None)
    return True if has_token_limits is None else bool(has_token_limits())
