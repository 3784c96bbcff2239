"""A fake OpenTelemetry collector on loopback for tests that drive `pa dev`: it takes OTLP over HTTP
(`POST /v1/traces`, a protobuf `ExportTraceServiceRequest`, as the SDK's exporter sends it), decodes it with the
opentelemetry-proto classes and keeps every span: its name, its attributes and its events' as plain values, its
trace, span and parent ids."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.live_server import LiveServer


@dataclass
class SpanSeen:
    name: str
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    duration_ns: int = 0
    trace_id: str = ""  # hex, as a traceparent writes them; parent_id "" for a trace's root
    span_id: str = ""
    parent_id: str = ""
    raw: bytes = b""  # the span's own encoding: what a test looks for text in, one trace at a time


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return _attributes(value.kvlist_value.values)
    return getattr(value, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs if isinstance(pair, KeyValue)}


class FakeCollector:
    def __init__(self) -> None:
        self.spans: list[SpanSeen] = []
        self.raw: list[bytes] = []
        self._lock = threading.Lock()
        self.server = LiveServer(Starlette(routes=[Route("/v1/traces", self._traces, methods=["POST"])]))

    @property
    def endpoint(self) -> str:
        return self.server.url

    async def _traces(self, request: Request) -> Response:
        body = await request.body()
        export = ExportTraceServiceRequest()
        export.ParseFromString(body)
        seen = [
            SpanSeen(
                span.name,
                _attributes(span.attributes),
                [(e.name, _attributes(e.attributes)) for e in span.events],
                span.end_time_unix_nano - span.start_time_unix_nano,
                span.trace_id.hex(),
                span.span_id.hex(),
                span.parent_span_id.hex(),
                span.SerializeToString(),
            )
            for resource in export.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]
        with self._lock:
            self.spans.extend(seen)
            self.raw.append(body)
        reply = ExportTraceServiceResponse().SerializeToString()
        return Response(reply, media_type="application/x-protobuf")

    def snapshot(self) -> list[SpanSeen]:
        with self._lock:
            return list(self.spans)

    def raw_bytes(self) -> bytes:
        with self._lock:
            return b"".join(self.raw)


@contextmanager
def running_collector() -> Iterator[FakeCollector]:
    collector = FakeCollector()
    collector.server.start()
    try:
        yield collector
    finally:
        collector.server.stop()
