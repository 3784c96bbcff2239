"""Traces over OTLP (issue 37 item 5), when `PA_OTEL_ENDPOINT` is set: the OpenTelemetry SDK with a batching OTLP
HTTP exporter, and pydantic-ai's own instrumentation (GenAI semantic conventions: the agent run, each model request
with its model and tokens, each tool call) pointed at it, plus our spans and events for what pydantic-ai does not
see: a request's cost from the ledger's price, each gate decision, each knowledge retrieval. When it is unset the
SDK is never imported and `span()` is a no-op.

No message content or secret goes into an attribute: prompts, answers, tool arguments and results only when the
operator allows it (`PA_OTEL_CONTENT`) and the org turned it on (its `trace_content` setting), and never for a
restricted run; our attributes are ids, names, counts, tokens and prices."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from personal_agent.settings import get_settings

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span

    from personal_agent.spec.run_spec import RunSpec

_lock = threading.Lock()
_provider: list[TracerProvider] = []  # the process's provider once built
_forced_ids: ContextVar[tuple[int, int] | None] = ContextVar("pa_otel_forced_ids", default=None)
_launch_tokens: ContextVar[list[Any] | None] = ContextVar("pa_otel_launch_tokens", default=None)


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

            resource = Resource.create({"service.name": "personal-agent"})
            built = TracerProvider(resource=resource, id_generator=_run_root_ids())
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

    content = content_allowed(spec)
    settings = InstrumentationSettings(
        tracer_provider=traces,
        include_content=content,
        include_binary_content=False,
        include_model_request_parameters=content,  # tool definitions: what a restricted run was offered stays out
    )
    return [Instrumentation(settings=settings)]


def content_allowed(spec: RunSpec) -> bool:
    """Whether the run's spans may carry its messages: the operator allows it (`PA_OTEL_CONTENT`, the ceiling), the
    org turned it on (its `trace_content` setting, snapshotted at launch), and the chat is not restricted (nor its
    data internal-tier)."""
    operator = get_settings().otel_content
    return operator and spec.trace_content and spec.classification != "restricted" and spec.labels.content_tier < 2


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


def _run_root_ids() -> Any:
    """The SDK's random ids, except for a durable run's root span, whose trace and span ids were chosen at launch
    and travelled in the state machine's input (`emit_run_root`)."""
    from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

    class RunRootIds(RandomIdGenerator):
        def generate_trace_id(self) -> int:
            forced = _forced_ids.get()
            return forced[0] if forced else super().generate_trace_id()

        def generate_span_id(self) -> int:
            forced = _forced_ids.get()
            return forced[1] if forced else super().generate_span_id()

    return RunRootIds()


@contextmanager
def launch_scope() -> Iterator[None]:
    """Around a launch: a root `begin_run_trace` attached inside it is detached when the launch is over."""
    tokens: list[Any] = []
    scope = _launch_tokens.set(tokens)
    try:
        yield
    finally:
        _launch_tokens.reset(scope)
        if tokens:
            from opentelemetry import context

            context.detach(tokens[0])


def begin_run_trace(mode: str) -> None:
    """A new trace for a durable run, from its launch on (inside `launch_scope`): its root span's ids are chosen now
    and made current, so the launch's spans (its gate decisions) and, through the state machine's input
    (`traceparent`), every step's are its children. The root span itself is exported when the run ends
    (`emit_run_root`). No-op for an inline run (one process: pydantic-ai's `invoke_agent` is its root) and with
    traces off."""
    tokens = _launch_tokens.get()
    if mode != "durable" or provider() is None or tokens is None or tokens:
        return
    from opentelemetry import context, trace

    root = trace.NonRecordingSpan(_new_root())
    tokens.append(context.attach(trace.set_span_in_context(root)))


def _new_root() -> Any:
    """Fresh root ids; the trace id starts with the epoch second, as X-Ray's do (through ADOT it takes them as is)."""
    from opentelemetry import trace

    return trace.SpanContext(
        trace_id=(int(time.time()) << 96) | random.getrandbits(96),
        span_id=random.getrandbits(64) or 1,
        is_remote=False,
        trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
    )


def traceparent() -> str:
    """The current span as a W3C `traceparent` value (a fresh root when there is none); "" with traces off. Only
    ids and a flag: `00-{trace id}-{span id}-01`."""
    if provider() is None:
        return ""
    from opentelemetry import trace

    current = trace.get_current_span().get_span_context()
    ids = current if current.is_valid else _new_root()
    return f"00-{ids.trace_id:032x}-{ids.span_id:016x}-{int(ids.trace_flags):02x}"


def _remote(parent: str) -> Any:
    """The span a `traceparent` names (an invalid one when it names none)."""
    from opentelemetry import trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    return trace.get_current_span(TraceContextTextMapPropagator().extract({"traceparent": parent}))


@contextmanager
def child_of(parent: str, name: str, attributes: dict[str, Any]) -> Iterator[Span | None]:
    """A span of ours under the one `parent` (a `traceparent`) names: a durable run's step under the run's root span.
    Without a valid parent it is a span under the current one; None with traces off."""
    traces = provider()
    if traces is None:
        yield None
        return
    from opentelemetry import trace

    remote = _remote(parent) if parent else trace.INVALID_SPAN
    parent_context = trace.set_span_in_context(remote) if remote.get_span_context().is_valid else None
    tracer = traces.get_tracer("personal_agent")
    with tracer.start_as_current_span(name, context=parent_context, attributes=attributes) as current:
        yield current


def emit_run_root(parent: str, name: str, start_ns: int, attributes: dict[str, Any], error: str | None) -> None:
    """Export a durable run's root span, the one `parent` names (its ids chosen at launch), from its launch to now."""
    traces = provider()
    if traces is None or not parent:
        return
    from opentelemetry import context, trace

    root = _remote(parent).get_span_context()
    if not root.is_valid:
        return
    forced = _forced_ids.set((root.trace_id, root.span_id))
    try:
        tracer = traces.get_tracer("personal_agent")
        made = tracer.start_span(name, context=context.Context(), start_time=start_ns, attributes=attributes)
    finally:
        _forced_ids.reset(forced)
    if error:
        made.set_status(trace.Status(trace.StatusCode.ERROR, error))
    made.end()


def flush(timeout_ms: int = 5000) -> None:
    """Send what is batched now (a Lambda may be frozen once its handler returns); nothing with traces off."""
    traces = provider()
    if traces is not None:
        traces.force_flush(timeout_ms)
