"""template.yaml against the code it deploys: handlers exist, the ASL's substitutions are defined, cost
tags are on every taggable resource, and no function's environment holds a secret."""

from __future__ import annotations

import ast
import os
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from personal_agent import observability
from personal_agent.local.aws import local_substitutions
from personal_agent.local.lambda_registry import LambdaRegistry, load_template
from personal_agent.local.stack import LOCAL_ASL_PARAMETERS

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = load_template(ROOT / "template.yaml")
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]
GLOBAL_FUNCTION: dict[str, Any] = TEMPLATE.get("Globals", {}).get("Function", {})
SUBSTITUTION = re.compile(r"\$\{([A-Za-z0-9_]+)\}")

# Logical ids are contracts (local registry, ASL substitutions, docs); so are their folders.
FUNCTIONS = {
    "ApiFunction": "api",
    "StreamFunction": "stream",
    "RunWorkerFunction": "run_worker",
    "RunRecoveryFunction": "run_recovery",
    "StepsFunction": "steps",
    "TriggersFunction": "triggers",
    "PlatformMcpFunction": "platform_mcp",
    "DeliverFunction": "deliver",
    "IngestFunction": "ingest",
    "ActivityPollerFunction": "activity_poller",
    "MigrateFunction": "migrate",
    "MeteringFunction": "metering",
    "SandboxFunction": "sandbox",
    "ChannelsFunction": "channels",
    "DataJobsFunction": "data_jobs",
}
# SAM resource types and the CloudFormation resource each becomes (for "does it take Tags?").
SAM_TYPES = {
    "AWS::Serverless::Function": "AWS::Lambda::Function",
    "AWS::Serverless::HttpApi": "AWS::ApiGatewayV2::Api",
    "AWS::Serverless::StateMachine": "AWS::StepFunctions::StateMachine",
    "AWS::Serverless::LayerVersion": "AWS::Lambda::LayerVersion",
}


# Channels in (docs/channels.md): each request proves itself with its channel's own signature (test_template_channels).
CHANNEL_ROUTES = {
    ("POST", f"/api/v1/channels/{path}"): ("ChannelsFunction", True)
    for path in ("slack/events", "slack/interactions", "slack/commands", "telegram/{org_slug}")
} | {("GET", "/api/v1/channels/slack/oauth"): ("ChannelsFunction", True)}


def _of_type(kind: str) -> dict[str, dict[str, Any]]:
    return {name: r for name, r in RESOURCES.items() if r["Type"] == kind}


def _props(name: str) -> dict[str, Any]:
    props: dict[str, Any] = RESOURCES[name].get("Properties", {})
    return props


def _env(name: str) -> dict[str, Any]:
    """A function's environment as deployed: the Globals' variables overlaid with its own."""
    merged = dict(GLOBAL_FUNCTION.get("Environment", {}).get("Variables", {}))
    merged.update(_props(name).get("Environment", {}).get("Variables", {}))
    return merged


def _module_attributes(path: Path) -> set[str]:
    """Names a module defines at top level (functions, classes, assignments), without importing it."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _referenced_names(value: Any) -> set[str]:
    """Logical ids and parameters a property value refers to (Ref, GetAtt, Sub)."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "Ref" and isinstance(inner, str):
                found.add(inner)
            elif key == "Fn::GetAtt":
                found.add(inner.split(".", 1)[0] if isinstance(inner, str) else inner[0])
            elif key == "Fn::Sub":
                text = inner if isinstance(inner, str) else inner[0]
                found.update(n.split(".", 1)[0] for n in SUBSTITUTION.findall(text))
                if not isinstance(inner, str):
                    found.update(_referenced_names(inner[1]))
            else:
                found.update(_referenced_names(inner))
    elif isinstance(value, list):
        for item in value:
            found.update(_referenced_names(item))
    return found


def test_the_functions_are_declared_with_their_folders() -> None:
    declared = {
        name: str(r["Properties"]["CodeUri"]).strip("/") for name, r in _of_type("AWS::Serverless::Function").items()
    }
    assert declared == {name: f"functions/{folder}" for name, folder in FUNCTIONS.items()}


@pytest.mark.parametrize("logical_id", sorted(FUNCTIONS))
def test_every_function_handler_exists(logical_id: str) -> None:
    props = _props(logical_id)
    folder = ROOT / str(props["CodeUri"])
    handler = str(props["Handler"])
    assert folder.is_dir(), f"{logical_id}: no folder {folder.relative_to(ROOT)}"
    if handler.endswith(".sh"):
        # Lambda Web Adapter: /opt/bootstrap execs the handler script, which serves an ASGI app on $PORT.
        script = folder / handler
        assert script.is_file() and os.access(script, os.X_OK), f"{script.relative_to(ROOT)} must be executable"
        assert script.read_text().startswith("#!"), "the script needs a shebang line"
        assert _env(logical_id).get("AWS_LAMBDA_EXEC_WRAPPER") == "/opt/bootstrap"
        words = shlex.split(" ".join(line for line in script.read_text().splitlines() if line.startswith("exec ")))
        module, _, attribute = words[words.index("uvicorn") + 1].partition(":")
    else:
        module, _, attribute = handler.rpartition(".")
    source = folder / f"{module.replace('.', '/')}.py"
    assert source.is_file(), f"{logical_id}: handler module {source.relative_to(ROOT)} is missing"
    assert attribute in _module_attributes(source), f"{logical_id}: {source.name} defines no {attribute!r}"


def test_the_local_registry_dispatches_the_python_handlers() -> None:
    specs = {spec.logical_id: spec for spec in LambdaRegistry.from_template(ROOT / "template.yaml")._specs.values()}
    assert set(specs) == set(FUNCTIONS)
    for name in sorted(set(FUNCTIONS) - {"StreamFunction"}):
        assert (specs[name].module, specs[name].attribute) == (f"functions.{FUNCTIONS[name]}.app", "handler")


def _state_machines() -> list[tuple[str, dict[str, Any], Path]]:
    machines = []
    for name, resource in _of_type("AWS::Serverless::StateMachine").items():
        props = resource["Properties"]
        machines.append((name, props, ROOT / str(props["DefinitionUri"])))
    assert machines, "template.yaml declares no state machine"
    return machines


def test_every_substitution_the_asl_uses_is_defined() -> None:
    for name, props, path in _state_machines():
        assert path.is_file(), f"{name}: {path.relative_to(ROOT)} is missing"
        used = set(SUBSTITUTION.findall(path.read_text()))
        defined = set(props.get("DefinitionSubstitutions", {}))
        assert used <= defined, f"{path.name} uses undefined substitutions: {sorted(used - defined)}"


def test_the_state_machine_may_invoke_every_function_its_asl_names() -> None:
    for name, props, path in _state_machines():
        invokable = {
            p["LambdaInvokePolicy"]["FunctionName"]["Ref"]
            for p in props.get("Policies", [])
            if isinstance(p, dict) and "LambdaInvokePolicy" in p
        }
        for sub in set(SUBSTITUTION.findall(path.read_text())):
            if sub.endswith("FunctionArn"):
                assert sub.removesuffix("Arn") in invokable, f"{name} cannot invoke {sub.removesuffix('Arn')}"


def test_substitutions_reference_nothing_that_references_the_state_machine() -> None:
    for name, props, _ in _state_machines():
        for ref in _referenced_names(props.get("DefinitionSubstitutions", {})):
            if ref in RESOURCES:
                back = _referenced_names(RESOURCES[ref].get("Properties", {}))
                assert name not in back, f"{name} -> {ref} -> {name} is a dependency cycle"


def test_local_and_template_substitutions_agree() -> None:
    """The local stack renders every ASL file with the same names the template gives in AWS."""
    template_params = set()
    for _, props, _ in _state_machines():
        template_params |= {k for k in props.get("DefinitionSubstitutions", {}) if not k.endswith("FunctionArn")}
    assert template_params == set(LOCAL_ASL_PARAMETERS)
    registry = LambdaRegistry.from_template(ROOT / "template.yaml")
    local = local_substitutions(registry, extra=LOCAL_ASL_PARAMETERS)
    for path in sorted((ROOT / "infra" / "statemachines").glob("*.asl.json")):
        missing = set(SUBSTITUTION.findall(path.read_text())) - set(local)
        assert not missing, f"{path.name}: the local stack cannot render {sorted(missing)}"


def _taggable(kind: str) -> bool:
    from cfnlint.schema import PROVIDER_SCHEMA_MANAGER

    schema = PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", SAM_TYPES.get(kind, kind)).schema
    return "Tags" in schema.get("properties", {})


def _tags(name: str) -> dict[str, Any]:
    resource = RESOURCES[name]
    tags = resource.get("Properties", {}).get("Tags")
    if tags is None and resource["Type"] == "AWS::Serverless::Function":
        tags = GLOBAL_FUNCTION.get("Tags")
    if isinstance(tags, list):
        return {t["Key"]: t["Value"] for t in tags}
    return dict(tags or {})


def test_every_taggable_resource_carries_the_cost_allocation_tags() -> None:
    untagged = []
    for name, resource in RESOURCES.items():
        if not _taggable(resource["Type"]):
            continue
        tags = _tags(name)
        if tags.get("pa:tenant") != {"Ref": "TenantId"} or tags.get("pa:stage") != {"Ref": "Stage"}:
            untagged.append(name)
    assert untagged == []


def test_sam_resources_pass_their_tags_to_what_they_generate() -> None:
    """Roles, stages and URLs SAM creates for a resource carry its tags only with PropagateTags."""
    for name, resource in RESOURCES.items():
        if resource["Type"] in (
            "AWS::Serverless::Function",
            "AWS::Serverless::HttpApi",
            "AWS::Serverless::StateMachine",
        ):
            props = resource["Properties"]
            if resource["Type"] == "AWS::Serverless::Function":
                props = {**GLOBAL_FUNCTION, **props}
            assert props.get("PropagateTags") is True, name


SECRET_NAME = re.compile(r"(API_KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)$")
SECRET_VALUE = re.compile(r"sk-[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}|pa_pat_|-----BEGIN|://[^/\s:@]+:[^/\s@]+@")


@pytest.mark.parametrize("logical_id", sorted(FUNCTIONS))
def test_no_function_environment_holds_a_secret(logical_id: str) -> None:
    no_echo = {name for name, p in TEMPLATE["Parameters"].items() if str(p.get("NoEcho", "")).lower() == "true"}
    for var, value in _env(logical_id).items():
        assert not SECRET_NAME.search(var), f"{var}: pass the secret's ARN (…_SECRET_ARN), not the secret"
        text = str(value)
        assert "{{resolve:secretsmanager" not in text and "{{resolve:ssm-secure" not in text, var
        assert not SECRET_VALUE.search(text), f"{var} looks like it holds a credential"
        assert not (_referenced_names(value) & no_echo), f"{var} exposes a NoEcho parameter"


def _readable_secrets(name: str) -> set[str]:
    readable = set()
    for policy in _props(name).get("Policies", []):
        if isinstance(policy, dict) and "Fn::If" in policy:
            policy = policy["Fn::If"][1]  # the policy that applies when its condition holds
        if isinstance(policy, dict) and "AWSSecretsManagerGetSecretValuePolicy" in policy:
            readable |= _referenced_names(policy["AWSSecretsManagerGetSecretValuePolicy"]["SecretArn"])
    return readable


@pytest.mark.parametrize("logical_id", sorted(FUNCTIONS))
def test_every_function_may_read_the_secrets_its_environment_names(logical_id: str) -> None:
    named = set()
    for var, value in _env(logical_id).items():
        if var.endswith("_SECRET_ARN"):
            named |= _referenced_names(value) - {"CreateDatabaseSecret", "HasUpstash", "AWS::NoValue"}
    assert named <= _readable_secrets(logical_id)


def _routes(api: str) -> dict[tuple[str, str], tuple[str, bool]]:
    """(method, path) -> (function, open) for the routes of `api`."""
    routes = {}
    for name in FUNCTIONS:
        for event in _props(name).get("Events", {}).values():
            if event["Type"] == "HttpApi" and event["Properties"]["ApiId"] == {"Ref": api}:
                route = (event["Properties"]["Method"], event["Properties"]["Path"])
                routes[route] = (name, event["Properties"].get("Auth", {}).get("Authorizer") == "NONE")
    return routes


def test_http_api_checks_jwts_except_on_health_config_and_webhook_routes() -> None:
    api = _props("HttpApi")
    authorizer = api["Auth"]["Authorizers"][api["Auth"]["DefaultAuthorizer"]]["JwtConfiguration"]
    assert authorizer == {"issuer": {"Ref": "OidcIssuer"}, "audience": [{"Ref": "OidcAudience"}]}
    assert _routes("HttpApi") == {
        ("ANY", "/api/{proxy+}"): ("ApiFunction", False),
        ("ANY", "/v1/{proxy+}"): ("ApiFunction", False),
        ("GET", "/healthz"): ("ApiFunction", True),
        ("GET", "/readyz"): ("ApiFunction", True),
        ("GET", "/health/deps"): ("ApiFunction", True),
        ("GET", "/api/v1/config"): ("ApiFunction", True),
        ("POST", "/api/v1/hooks/{workflow_id}"): ("TriggersFunction", True),
        **{(method, "/mcp"): ("PlatformMcpFunction", False) for method in ("GET", "POST", "DELETE")},
        **CHANNEL_ROUTES,
    }


def test_personal_access_tokens_have_an_api_without_the_jwt_authorizer() -> None:
    assert "Auth" not in _props("TokenApi")
    assert _routes("TokenApi") == {
        ("ANY", "/api/{proxy+}"): ("ApiFunction", False),
        ("ANY", "/v1/{proxy+}"): ("ApiFunction", False),
        **{(method, "/mcp"): ("PlatformMcpFunction", False) for method in ("GET", "POST", "DELETE")},
    }


def test_stream_function_streams_through_the_web_adapter() -> None:
    props = _props("StreamFunction")
    assert props["FunctionUrlConfig"]["InvokeMode"] == "RESPONSE_STREAM"
    env = _env("StreamFunction")
    assert env["AWS_LWA_INVOKE_MODE"] == "response_stream" and str(env["PORT"]).isdigit()
    assert any("WebAdapterLayerArn" in _referenced_names(layer) for layer in props["Layers"])


def test_the_api_function_does_not_carry_pydantic_ai_and_the_stream_function_only_to_drive_streamed_runs() -> None:
    layers = [
        layer for layer in _props("ApiFunction")["Layers"] if _referenced_names(layer) & {"ApiLayer", "WorkerLayer"}
    ]
    assert layers == [{"Ref": "ApiLayer"}]
    stream = [
        layer for layer in _props("StreamFunction")["Layers"] if _referenced_names(layer) & {"ApiLayer", "WorkerLayer"}
    ]
    assert stream == [{"Fn::If": ["DrivesStreamedRuns", {"Ref": "WorkerLayer"}, {"Ref": "ApiLayer"}]}]
    assert _env("StreamFunction")["PA_STREAM_DRIVES_RUNS"] == {"Ref": "StreamDrivesRuns"}
    prune = re.search(r"^API_LAYER_PRUNE := (.+)$", (ROOT / "Makefile").read_text(), re.M)
    assert prune and {"pydantic-ai-slim", "mcp", "genai-prices"} <= set(prune.group(1).split())


def test_asynchronously_invoked_functions_keep_their_failures() -> None:
    for name in ("RunRecoveryFunction", "TriggersFunction"):
        on_failure = _props(name)["EventInvokeConfig"]["DestinationConfig"]["OnFailure"]
        assert on_failure["Type"] == "SQS"
        assert _referenced_names(on_failure["Destination"]) <= set(_of_type("AWS::SQS::Queue"))


def test_a_crashed_run_worker_is_retried_from_its_checkpoint_then_its_run_is_ended() -> None:
    """Lambda retries a run worker invocation that died; the retry takes the dead attempt's lease over (it expired
    before the first retry, 60 s later); after the last attempt the recovery function ends the run `worker_lost`."""
    from personal_agent.settings import Settings

    config = _props("RunWorkerFunction")["EventInvokeConfig"]
    assert 1 + config["MaximumRetryAttempts"] == Settings.model_fields["run_max_attempts"].default
    lease = Settings.model_fields["run_lease_seconds"]
    assert lease.default < 60 and any(getattr(m, "le", 60) < 60 for m in lease.metadata)
    assert config["DestinationConfig"]["OnFailure"] == {
        "Type": "Lambda",
        "Destination": {"Fn::GetAtt": "RunRecoveryFunction.Arn"},
    }
    source = (ROOT / "functions" / "run_recovery" / "app.py").read_text()
    assert "handle_failure_record" in source
    assert _props("RunRecoveryFunction")["Layers"] == [{"Ref": "WorkerLayer"}]  # it ends runs through the engine


def test_alarms_and_dashboard_use_the_metric_names_the_code_emits() -> None:
    emitted = {
        observability.RUNS_STARTED,
        observability.RUNS_FINISHED,
        observability.RUNS_FAILED,
        observability.INPUT_TOKENS,
        observability.OUTPUT_TOKENS,
        observability.COST_USD,
        observability.APPROVAL_WAIT_SECONDS,
    }
    namespace = {"Fn::Sub": "PersonalAgent/${TenantId}-${Stage}"}
    assert _props("FailedRunsAlarm")["MetricName"] == observability.RUNS_FAILED
    assert _props("FailedRunsAlarm")["Namespace"] == namespace
    assert GLOBAL_FUNCTION["Environment"]["Variables"]["POWERTOOLS_METRICS_NAMESPACE"] == namespace
    body = _props("Dashboard")["DashboardBody"]["Fn::Sub"][0]
    assert emitted <= set(re.findall(r'"([A-Z][A-Za-z]+)"', body))
