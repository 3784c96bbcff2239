"""Handlers under `instrument`: JSON logs with the correlation id (the modules' own loggers too), one EMF
document per invocation on Lambda, nothing printed as metrics outside it."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from personal_agent import observability
from personal_agent.observability import instrument, record_approval_wait, record_run_failed, record_usage
from tests.lambda_context import FakeLambdaContext, load_event


@instrument(correlation_id_path="run_id")
def _failing_run_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    observability.logger.info("advancing")
    record_usage(input_tokens=120, output_tokens=30, cost_usd=0.0021)
    record_approval_wait(42.5)
    record_run_failed("model_error")
    return {"run_id": event["run_id"], "status": "failed"}


@instrument(correlation_id_path="run_id")
def _handler_whose_module_logs(event: dict[str, Any], context: Any) -> None:
    try:
        raise RuntimeError("model stream broke")
    except RuntimeError:
        logging.getLogger("personal_agent.runs").exception("inline run failed", extra={"run_id": event["run_id"]})
    logging.getLogger("personal_agent.new_area.module").warning("a logger made after the routing")


def _json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


@pytest.fixture
def log_output() -> Iterator[io.StringIO]:
    """What the Powertools logger writes (its handler holds the stdout it was created with, not capsys's)."""
    buffer = io.StringIO()
    handler = observability.logger.registered_handler
    previous = handler.setStream(buffer)  # type: ignore[attr-defined]
    try:
        yield buffer
    finally:
        handler.setStream(previous)  # type: ignore[attr-defined]


def test_on_lambda_an_invocation_publishes_its_metrics_as_one_emf_document(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], log_output: io.StringIO
) -> None:
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "personal-agent-steps")
    event = load_event("steps_advance.json")
    assert _failing_run_handler(event, FakeLambdaContext()) == {"run_id": event["run_id"], "status": "failed"}
    log = next(line for line in _json_lines(log_output.getvalue()) if line.get("message") == "advancing")
    assert log["correlation_id"] == event["run_id"] and log["service"] == observability.SERVICE
    emf = [line for line in _json_lines(capsys.readouterr().out) if "_aws" in line]
    assert len(emf) == 1
    names = {m["Name"] for m in emf[0]["_aws"]["CloudWatchMetrics"][0]["Metrics"]}
    assert names == {"InputTokens", "OutputTokens", "CostUsd", "ApprovalWaitSeconds", "RunsFailed"}
    assert emf[0]["RunsFailed"] == [1.0] and emf[0]["InputTokens"] == [120.0]
    assert emf[0]["failure_code"] == "model_error" and emf[0]["service"] == observability.SERVICE
    assert not observability.metrics.metric_set  # flushed, nothing carried into the next invocation


def test_outside_lambda_no_metrics_are_printed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME", raising=False)
    _failing_run_handler(load_event("steps_advance.json"), FakeLambdaContext())
    assert not [line for line in _json_lines(capsys.readouterr().out) if "_aws" in line]


def test_a_traced_handler_runs_where_there_is_no_x_ray_daemon(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME", raising=False)

    @instrument(correlation_id_path="action", trace=True)
    def handler(event: dict[str, Any], context: Any) -> str:
        return str(event["action"])

    assert handler(load_event("steps_ping.json"), FakeLambdaContext()) == "ping"
    assert handler(load_event("steps_ping.json"), FakeLambdaContext()) == "ping"


def test_a_module_logger_writes_json_with_the_correlation_id(log_output: io.StringIO) -> None:
    event = load_event("steps_advance.json")
    _handler_whose_module_logs(event, FakeLambdaContext(function_name="personal-agent-steps"))
    lines = {line["message"]: line for line in _json_lines(log_output.getvalue())}
    failed = lines["inline run failed"]
    assert failed["correlation_id"] == event["run_id"] and failed["run_id"] == event["run_id"]
    assert failed["level"] == "ERROR" and failed["name"] == "personal_agent.runs"
    assert failed["function_name"] == "personal-agent-steps" and failed["service"] == observability.SERVICE
    assert "RuntimeError: model stream broke" in failed["exception"]
    later = lines["a logger made after the routing"]
    assert later["correlation_id"] == event["run_id"] and later["name"] == "personal_agent.new_area.module"
