"""`/mcp` on AWS: template.yaml routes it to its own function, on a layer that carries the `mcp` SDK (the API
layer leaves it out), with what starting a run needs; its handler's cold start stays free of secrets and boto3."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from personal_agent.local.lambda_registry import LambdaRegistry, load_template

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = load_template(ROOT / "template.yaml")
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]
FUNCTION = "PlatformMcpFunction"
MAKEFILE = (ROOT / "Makefile").read_text()


def _props(name: str) -> dict[str, Any]:
    props: dict[str, Any] = RESOURCES[name]["Properties"]
    return props


def _mcp_routes() -> dict[tuple[str, str], str]:
    """(api, method) -> function for every `/mcp` route of the stack."""
    routes = {}
    for name, resource in RESOURCES.items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        for event in resource["Properties"].get("Events", {}).values():
            props = event["Properties"]
            if event["Type"] == "HttpApi" and props["Path"] == "/mcp":
                routes[(props["ApiId"]["Ref"], props["Method"])] = name
                assert "Auth" not in props, "the JWT authorizer stays on HttpApi; TokenApi has none"
    return routes


def test_mcp_is_routed_to_its_own_function_on_both_apis() -> None:
    expected = {(api, method): FUNCTION for api in ("HttpApi", "TokenApi") for method in ("GET", "POST", "DELETE")}
    assert _mcp_routes() == expected
    outputs = TEMPLATE["Outputs"]
    assert outputs["McpUrl"]["Value"]["Fn::Sub"].endswith(
        "${TokenApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}/mcp"
    )


def test_the_function_is_a_thin_handler_over_the_platform_mcp_app() -> None:
    props = _props(FUNCTION)
    assert (props["CodeUri"].strip("/"), props["Handler"]) == ("functions/platform_mcp", "app.handler")
    source = (ROOT / "functions" / "platform_mcp" / "app.py").read_text()
    assert "create_platform_mcp_app" in source and "def handler(" in source
    specs = {s.logical_id: s for s in LambdaRegistry.from_template(ROOT / "template.yaml")._specs.values()}
    assert (specs[FUNCTION].module, specs[FUNCTION].attribute) == ("functions.platform_mcp.app", "handler")
    assert f"/aws/lambda/${{{FUNCTION}}}" == _props(f"{FUNCTION}LogGroup")["LogGroupName"]["Fn::Sub"]


def test_it_can_start_runs_both_ways_and_search_knowledge() -> None:
    props = _props(FUNCTION)
    env = props["Environment"]["Variables"]
    assert env["PA_STATE_MACHINE_ARN"] == {"Ref": "AgentRunStateMachine"}
    assert env["PA_RUN_WORKER_FUNCTION"] == {"Ref": "RunWorkerFunction"}
    policies = [p for p in props["Policies"] if isinstance(p, dict)]
    assert {
        "StepFunctionsExecutionPolicy": {"StateMachineName": {"Fn::GetAtt": "AgentRunStateMachine.Name"}}
    } in policies
    assert {"LambdaInvokePolicy": {"FunctionName": {"Ref": "RunWorkerFunction"}}} in policies
    # `search_knowledge` embeds its query through the ingest function, like the API's knowledge search.
    assert env["PA_KNOWLEDGE_FUNCTION"] == _props("ApiFunction")["Environment"]["Variables"]["PA_KNOWLEDGE_FUNCTION"]
    assert {"LambdaInvokePolicy": {"FunctionName": env["PA_KNOWLEDGE_FUNCTION"]}} in policies
    # Like the API, it never decrypts: keys are opened only in the workers.
    assert not any("KMSDecryptPolicy" in p for p in policies)


def _layer_export(prune: list[str]) -> set[str]:
    """The packages `make build` puts into a layer (the Makefile's own export command)."""
    export = re.search(r"^LAYER_EXPORT := (.+)$", MAKEFILE, re.M)
    assert export
    command = export.group(1).replace("$(UV)", str(ROOT / ".tools" / "bin" / "uv")).split()
    command += [arg for name in prune for arg in ("--prune", name)]
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return {line.split("==")[0].lower() for line in out.splitlines() if "==" in line}


def test_its_layer_carries_the_mcp_sdk_and_the_api_layer_does_not() -> None:
    assert _props(FUNCTION)["Layers"] == [{"Ref": "WorkerLayer"}]
    assert {"mcp", "mangum", "fastapi", "starlette"} <= _layer_export([])  # the worker layer prunes nothing
    api_prune = re.search(r"^API_LAYER_PRUNE := (.+)$", MAKEFILE, re.M)
    assert api_prune and "mcp" not in _layer_export(api_prune.group(1).split())
    assert _props("ApiFunction")["Layers"] == [{"Ref": "ApiLayer"}]


def test_importing_the_handler_fetches_no_secret_and_no_boto3() -> None:
    """Secrets load on first use, and the MCP SDK loads on the first authenticated request."""
    code = (
        "import sys, os, functions.platform_mcp.app; "
        "print('boto3' in sys.modules, 'DATABASE_URL' in os.environ, 'mcp' in sys.modules)"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "PA_ENV": "aws",
        "PYTHONPATH": str(ROOT),
        "PA_DATABASE_SECRET_ARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:pa-db-AbCdEf",
    }
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["False", "False", "False"]
