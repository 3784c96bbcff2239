"""template.yaml's traces held to docs/evals.md: `OtelExporter=xray` gives the functions that run agents (run worker,
steps, activity poller) AWS's published ADOT Python layer for their arm64 architecture, its wrapper
(`/opt/otel-instrument`) and collector configuration, active tracing and `PA_OTEL_ENDPOINT` at the layer's collector;
no other function gets the layer or a collector address nobody listens on; `endpoint` (the default) adds nothing.
And the durable state machine hands every Task the run's trace context from the execution's input."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from personal_agent.local.lambda_registry import load_template

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = load_template(ROOT / "template.yaml")
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]
AGENT_FUNCTIONS = {"RunWorkerFunction", "StepsFunction", "ActivityPollerFunction"}
ADOT_LAYER = re.compile(
    r"^arn:\$\{AWS::Partition\}:lambda:\$\{AWS::Region\}:901920570463:layer:aws-otel-python-arm64-ver-\d+-\d+-\d+:\d+$"
)
NO_VALUE = object()


def _resolve(value: Any, conditions: dict[str, bool]) -> Any:
    """The value as CloudFormation would see it with these conditions (Fn::If taken, AWS::NoValue dropped)."""
    if isinstance(value, dict):
        if set(value) == {"Fn::If"}:
            name, yes, no = value["Fn::If"]
            return _resolve(yes if conditions[name] else no, conditions)
        if value == {"Ref": "AWS::NoValue"}:
            return NO_VALUE
        resolved = {k: _resolve(v, conditions) for k, v in value.items()}
        return {k: v for k, v in resolved.items() if v is not NO_VALUE}
    if isinstance(value, list):
        return [v for v in (_resolve(item, conditions) for item in value) if v is not NO_VALUE]
    return value


def _function(name: str, xray: bool) -> dict[str, Any]:
    """A function's properties with the globals under them (a function's own variables win), resolved."""
    conditions = dict.fromkeys(TEMPLATE["Conditions"], False) | {"ExportsToXRay": xray, "UseDefaultAdotLayer": True}
    conditions["UseDefaultWebAdapterLayer"] = True
    defaults: dict[str, Any] = _resolve(TEMPLATE["Globals"]["Function"], conditions)
    own: dict[str, Any] = _resolve(RESOURCES[name]["Properties"], conditions)
    variables = defaults["Environment"]["Variables"] | own.get("Environment", {}).get("Variables", {})
    return defaults | own | {"Environment": {"Variables": variables}}


def _functions() -> list[str]:
    return [n for n, r in RESOURCES.items() if r["Type"] == "AWS::Serverless::Function"]


def _adot_layers(props: dict[str, Any]) -> list[str]:
    subs = [layer.get("Fn::Sub") for layer in props.get("Layers", []) if isinstance(layer, dict)]
    return [s for s in subs if isinstance(s, str) and "aws-otel-python" in s]


def test_the_exporter_is_a_choice_with_endpoint_as_the_default() -> None:
    exporter = TEMPLATE["Parameters"]["OtelExporter"]
    assert exporter["Default"] == "endpoint" and exporter["AllowedValues"] == ["endpoint", "xray"]
    assert TEMPLATE["Conditions"]["ExportsToXRay"] == {"Fn::Equals": [{"Ref": "OtelExporter"}, "xray"]}
    assert TEMPLATE["Parameters"]["AdotPythonLayerArn"]["Default"] == ""
    assert TEMPLATE["Parameters"]["OtelContent"]["Default"] == "false"  # the operator's ceiling: off


@pytest.mark.parametrize("name", sorted(AGENT_FUNCTIONS))
def test_xray_gives_the_agent_functions_the_adot_layer_and_its_collector(name: str) -> None:
    props = _function(name, xray=True)
    (layer,) = _adot_layers(props)
    assert ADOT_LAYER.match(layer), layer
    assert props["Architectures"] == ["arm64"] and "-arm64-" in layer  # the layer's build is the function's
    assert props["Tracing"] == "Active"
    variables = props["Environment"]["Variables"]
    assert variables["AWS_LAMBDA_EXEC_WRAPPER"] == "/opt/otel-instrument"
    assert variables["OPENTELEMETRY_COLLECTOR_CONFIG_URI"] == "/opt/collector-config/config.yaml"
    assert variables["PA_OTEL_ENDPOINT"] == "http://localhost:4318"  # the layer's collector, OTLP over HTTP
    assert variables["PA_OTEL_CONTENT"] == {"Ref": "OtelContent"}


def test_an_operators_own_adot_layer_replaces_the_published_one() -> None:
    conditions = {"ExportsToXRay": True, "UseDefaultAdotLayer": False}
    layers = [_resolve(layer, conditions) for layer in RESOURCES["StepsFunction"]["Properties"]["Layers"]]
    assert {"Ref": "AdotPythonLayerArn"} in layers


@pytest.mark.parametrize("name", sorted(AGENT_FUNCTIONS))
def test_endpoint_mode_adds_no_layer_and_no_wrapper(name: str) -> None:
    props = _function(name, xray=False)
    assert _adot_layers(props) == []
    variables = props["Environment"]["Variables"]
    assert "AWS_LAMBDA_EXEC_WRAPPER" not in variables and "OPENTELEMETRY_COLLECTOR_CONFIG_URI" not in variables
    assert variables["PA_OTEL_ENDPOINT"] == {"Ref": "OtelEndpoint"}


def test_no_other_function_gets_the_layer_or_an_address_nobody_listens_on() -> None:
    for name in set(_functions()) - AGENT_FUNCTIONS:
        props = _function(name, xray=True)
        variables = props["Environment"]["Variables"]
        assert _adot_layers(props) == [], name
        assert variables.get("AWS_LAMBDA_EXEC_WRAPPER") != "/opt/otel-instrument", name
        assert variables["PA_OTEL_ENDPOINT"] == "", name  # no collector in it: no spans rather than failed exports
        assert _function(name, xray=False)["Environment"]["Variables"]["PA_OTEL_ENDPOINT"] == {"Ref": "OtelEndpoint"}


def test_every_steps_task_carries_the_runs_trace_context() -> None:
    text = (ROOT / "infra" / "statemachines" / "agent_run.asl.json").read_text()
    states = json.loads(re.sub(r'(?<!")\$\{\w+\}(?!")', "0", text))["States"]
    payloads = [s["Parameters"]["Payload"] for s in states.values() if s["Type"] == "Task"]
    assert payloads and all(p["traceparent.$"] == "$$.Execution.Input.traceparent" for p in payloads)
