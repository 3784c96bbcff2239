"""Without PA_OTEL_ENDPOINT there are no traces and no cost for them: the OpenTelemetry SDK is never imported by the
engine, our spans are no-ops and a run's agent gets no instrumentation (checked in a fresh interpreter, so nothing
this test process imported counts)."""

from __future__ import annotations

import os
import subprocess
import sys

CHECK = """
import sys
from personal_agent import otel_export
from personal_agent.engine import agent_factory, drive, tool_review
from personal_agent.knowledge import search

assert otel_export.provider() is None and not otel_export.enabled()
with otel_export.span("gate x", {"gen_ai.tool.name": "x"}) as span:
    assert span is None
otel_export.event("pa.model_response", {"pa.request_index": 0})
assert otel_export.capabilities(None) == []  # type: ignore[arg-type]
assert not [m for m in sys.modules if m.startswith(("opentelemetry.sdk", "opentelemetry.exporter"))]
print("off")
"""


def test_no_endpoint_no_sdk_and_no_spans() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PA_OTEL")}
    done = subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "off", done.stderr[-2000:]
