"""Powertools for every Lambda handler: a Logger with a correlation id, EMF metrics and X-Ray tracing.

A handler is one delegating call under one decorator::

    from personal_agent.observability import instrument

    @instrument(correlation_id_path="requestContext.requestId")  # API: the API Gateway request id
    def handler(event, context): ...

    @instrument(correlation_id_path="run_id", trace=True)  # run worker, steps: the run id
    def handler(event, context): ...

The engine records business metrics where they happen (`record_run_started`, `record_usage`, ...) and
`instrument` publishes them as one EMF document at the end of the invocation. The ASGI stream relay has no
handler to wrap: it calls `publish_metrics()` after a request that recorded any. Outside Lambda (the dev
server, tests) the metric helpers do nothing, so local runs print no EMF.

Import cost matters for the API function: `Logger` and `Metrics` are light (no boto3), but building a
`Tracer` imports the X-Ray SDK and botocore and patches libraries (about a second here). So the tracer is
built on the first traced invocation, and the API function does not trace; Lambda's Active tracing still
records each of its invocations as a segment.

There is one logging path: every module logs through a std logger under `personal_agent` (`personal_agent.runs`,
`personal_agent.api`, ...), and that package logger writes with the Powertools logger's handler and formatter,
so its records are JSON with the service, the Lambda context and the correlation id like the handler's own.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter
from aws_lambda_powertools.logging.utils import copy_config_to_registered_loggers
from aws_lambda_powertools.metrics import MetricUnit

if TYPE_CHECKING:
    from aws_lambda_powertools import Tracer

SERVICE = os.environ.get("POWERTOOLS_SERVICE_NAME", "personal-agent")
NAMESPACE = os.environ.get("POWERTOOLS_METRICS_NAMESPACE", "PersonalAgent")

# Metric names are a contract with template.yaml (alarms and dashboard).
RUNS_STARTED = "RunsStarted"
RUNS_FINISHED = "RunsFinished"
RUNS_FAILED = "RunsFailed"
INPUT_TOKENS = "InputTokens"
OUTPUT_TOKENS = "OutputTokens"
COST_USD = "CostUsd"
APPROVAL_WAIT_SECONDS = "ApprovalWaitSeconds"

PACKAGE_LOGGER = "personal_agent"

# Every line names its std logger (`personal_agent.runs`, ...); as a constructor key it survives `clear_state`.
logger = Logger(service=SERVICE, level=os.environ.get("PA_LOG_LEVEL") or None, name="%(name)s")
metrics = Metrics(namespace=NAMESPACE, service=SERVICE)

Handler = TypeVar("Handler", bound=Callable[..., Any])


def route_package_logs() -> None:
    """Send every `personal_agent.*` std logger's records through the Powertools logger (idempotent).

    The package logger takes the Powertools handler, formatter and level and stops propagating (Lambda's root
    handler would print each record a second time, unformatted); module loggers created later inherit it.
    """
    logging.getLogger(PACKAGE_LOGGER)  # registered, so the copy below finds it
    copy_config_to_registered_loggers(source_logger=logger, include={PACKAGE_LOGGER})


route_package_logs()

ACCESS_LOGGER = f"{PACKAGE_LOGGER}.access"
"""One line per HTTP request of the dev server (`local/access_log.py`), on when `route_process_logs` turns it on."""


def route_process_logs() -> None:
    """A long-running server's console (`pa dev`): every record (and warning) of the process in the one format, the
    package's JSON line. Ours at the package's level, the access log at INFO, everyone else's (uvicorn, httpx, the `mcp`
    SDK, the embedded Postgres) from WARNING. The root logger gets the handler before any library configures it,
    so the `mcp` SDK's `basicConfig` (a rich console handler at INFO: multi-line `httpx` entries per MCP discovery,
    "session manager shutting down" per `/mcp` call) does nothing; one a library installed before is replaced.
    The handler's formatter is not the Powertools logger's: the Lambda handlers `pa dev` runs in process would
    leave their invocation's context on every later line."""
    route_package_logs()  # the package logger's level (`PA_LOG_LEVEL`), and no propagation to the root
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(LambdaPowertoolsFormatter(service=SERVICE, name="%(name)s"))
    logging.getLogger(PACKAGE_LOGGER).handlers = [handler]
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(logging.WARNING)
    logging.captureWarnings(True)  # a library's `warnings.warn` too: a line in the format, not two on stderr
    logging.getLogger(ACCESS_LOGGER).setLevel(logging.INFO)


def metrics_enabled() -> bool:
    """EMF is written only inside Lambda, where CloudWatch turns it into metrics."""
    return "AWS_LAMBDA_FUNCTION_NAME" in os.environ


def _count(name: str, value: float = 1, unit: MetricUnit = MetricUnit.Count) -> None:
    if metrics_enabled():
        metrics.add_metric(name=name, unit=unit, value=value)


def record_run_started(mode: str) -> None:
    """A run was launched (`mode`: inline or durable)."""
    _count(RUNS_STARTED)
    if metrics_enabled():
        metrics.add_metadata(key="mode", value=mode)


def record_run_finished() -> None:
    """A run reached its final answer."""
    _count(RUNS_FINISHED)


def record_run_failed(code: str) -> None:
    """A run ended in failure; `code` is the stable error code, kept as metadata (not a dimension)."""
    _count(RUNS_FAILED)
    if metrics_enabled():
        metrics.add_metadata(key="failure_code", value=code)


def record_usage(input_tokens: int, output_tokens: int, cost_usd: float | None) -> None:
    """One model response's tokens and, when priced, its cost."""
    _count(INPUT_TOKENS, input_tokens)
    _count(OUTPUT_TOKENS, output_tokens)
    if cost_usd is not None:
        _count(COST_USD, cost_usd, MetricUnit.NoUnit)


def record_approval_wait(seconds: float) -> None:
    """How long a run waited for a human approval."""
    _count(APPROVAL_WAIT_SECONDS, seconds, MetricUnit.Seconds)


def publish_metrics() -> None:
    """Write the recorded metrics as one EMF document (nothing when none were recorded)."""
    if metrics.metric_set:
        metrics.flush_metrics()


@functools.cache
def get_tracer() -> Tracer | None:
    """The process's Tracer, built on first use; None where the X-Ray SDK is not installed (the API layer)."""
    # Tracer imports the SDK lazily; find out now rather than in the middle of an invocation.
    if importlib.util.find_spec("aws_xray_sdk") is None:
        logger.warning("aws_xray_sdk is not installed: X-Ray subsegments are off for this function")
        return None
    from aws_lambda_powertools import Tracer

    return Tracer(service=SERVICE)


def instrument(*, correlation_id_path: str | None = None, trace: bool = False) -> Callable[[Handler], Handler]:
    """Wrap a Lambda handler: log context and correlation id, optional X-Ray subsegment, EMF flush.

    Responses are never captured into traces: they can hold conversation content.
    """

    def decorate(handler: Handler) -> Handler:
        logged = logger.inject_lambda_context(correlation_id_path=correlation_id_path, clear_state=True)(handler)
        traced: list[Callable[..., Any]] = []

        @functools.wraps(handler)
        def wrapper(event: Any, context: Any) -> Any:
            target: Callable[..., Any] = logged
            if trace:
                if not traced:
                    tracer = get_tracer()
                    traced.append(tracer.capture_lambda_handler(logged, capture_response=False) if tracer else logged)
                target = traced[0]
            try:
                return target(event, context)
            finally:
                publish_metrics()

        return wrapper  # type: ignore[return-value]

    return decorate
