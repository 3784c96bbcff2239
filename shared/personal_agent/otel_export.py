"""Traces over OTLP (issue 37 item 5), when `PA_OTEL_ENDPOINT` is set: the OpenTelemetry SDK with a batching OTLP
HTTP exporter, and pydantic-ai's own instrumentation (GenAI semantic conventions: the agent run, each model request
with its model and tokens, each tool call) pointed at it, plus our spans and events for what pydantic-ai does not
see: a request's cost from the ledger's price, each gate decision, each knowledge retrieval. When it is unset the
SDK is never imported and `span()` is a no-op.

No message content or secret goes into an attribute: prompts, answers, tool arguments and results only with
`PA_OTEL_CONTENT`, and never for a restricted run; our attributes are ids, names, counts, tokens and prices."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from personal_agent.settings import get_settings

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span

    from personal_agent.spec.run_spec import RunSpec

_lock = threading.Lock()
_provider: list[TracerProvider] = []  # the process's provider once built


def enabled() -> bool:
    return bool(get_settings().otel_endpoint)


def provider() -> TracerProvider | None:
    """The process's tracer provider exporting to `PA_OTEL_ENDPOINT` (built on first use); None when unset."""
    endpoint = get_settings().otel_endpoint
    if not endpoint:
        return None
    with _lock:
        if not _provider:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor

            built = TracerProvider(resource=Resource.create({"service.name": "personal-agent"}))
            exporter = OTLPSpanExporter(endpoint=endpoint.rstrip("/") + "/v1/traces")
            built.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=1000))
            _provider.append(built)
    return _provider[0]


def capabilities(spec: RunSpec) -> list[Any]:
    """The run's pydantic-ai instrumentation (a capability of its agent), or none when traces are off."""
    traces = provider()
    if traces is None:
        return []
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings

    content = get_settings().otel_content and spec.classification != "restricted" and spec.labels.content_tier < 2
    settings = InstrumentationSettings(
        tracer_provider=traces,
        include_content=content,
        include_binary_content=False,
        include_model_request_parameters=content,  # tool definitions: what a restricted run was offered stays out
    )
    return [Instrumentation(settings=settings)]


@contextmanager
def span(name: str, attributes: dict[str, Any]) -> Iterator[Span | None]:
    """A span of ours under the current one (None, and nothing recorded, when traces are off)."""
    traces = provider()
    if traces is None:
        yield None
        return
    with traces.get_tracer("personal_agent").start_as_current_span(name, attributes=attributes) as current:
        yield current


def event(name: str, attributes: dict[str, Any]) -> None:
    """An event on the current span (a model response's ledger figures on the agent run's span)."""
    if provider() is None:
        return
    from opentelemetry import trace

    trace.get_current_span().add_event(name, attributes=attributes)
