"""The deploy rehearsal: `template.yaml` packaged and transformed as `sam deploy` would (SAM's own translator, run
by the SAM CLI's interpreter), then created as a CloudFormation stack in LocalStack.

LocalStack (community, no Docker, offline) cannot create every resource type. Those resources are taken out and
every `Ref`, `Fn::GetAtt` and `${...}` that names them is replaced with a value of the same shape (an ARN, a name,
a URL), so everything else is created for real with realistic references: the IAM roles and their policies, the
state machine with its definition substitutions, the queues and their redrive policies, the activity, the KMS key,
the secrets, the log groups, the alarms. `STAND_INS` says why each type is left out."""

from __future__ import annotations

import copy
import io
import json
import os
import re
import subprocess
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAM_PYTHON = ROOT / ".tools" / "sam" / "bin" / "python"
TRANSFORM = ROOT / "infra" / "localstack" / "sam_transform.py"
ACCOUNT = "000000000000"
REGION = "us-east-1"

_LAMBDA = "Lambda needs Docker and LocalStack's lambda runtime, a download (neither is here)"
STAND_INS = {
    "AWS::Lambda::Function": _LAMBDA,
    "AWS::Lambda::Version": _LAMBDA,
    "AWS::Lambda::Alias": _LAMBDA,
    "AWS::Lambda::Url": _LAMBDA,
    "AWS::Lambda::Permission": _LAMBDA,
    "AWS::Lambda::EventInvokeConfig": _LAMBDA,
    "AWS::Lambda::EventSourceMapping": _LAMBDA + " (a mapping needs its function)",
    "Custom::DatabaseMigrations": _LAMBDA + " (a custom resource is a Lambda)",
    "AWS::ApiGatewayV2::Api": "API Gateway v2 (HTTP APIs) is LocalStack Pro",
    "AWS::ApiGatewayV2::Stage": "API Gateway v2 (HTTP APIs) is LocalStack Pro",
    "AWS::CloudFront::Distribution": "CloudFront is LocalStack Pro",
    "AWS::CloudFront::Function": "CloudFront is LocalStack Pro",
    "AWS::CloudFront::OriginAccessControl": "CloudFront is LocalStack Pro",
    "AWS::CloudFront::ResponseHeadersPolicy": "CloudFront is LocalStack Pro",
    "AWS::RDS::DBCluster": "RDS is LocalStack Pro",
    "AWS::RDS::DBInstance": "RDS is LocalStack Pro",
    "AWS::RDS::DBSubnetGroup": "RDS is LocalStack Pro",
}


def sam_transform(template: Path, bucket: str, endpoint: str) -> dict[str, Any]:
    """The packaged, transformed CloudFormation template (IAM's managed policies listed from `endpoint`)."""
    env = os.environ | {"AWS_DEFAULT_REGION": REGION, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
    env.pop("AWS_ENDPOINT_URL", None)
    done = subprocess.run(
        [str(SAM_PYTHON), str(TRANSFORM), str(template), bucket, endpoint],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    transformed: dict[str, Any] = json.loads(done.stdout)
    return transformed


def _placeholder(logical_id: str, kind: str, attribute: str | None, tag: str) -> str:
    service, name = kind.split("::")[1].lower(), f"{tag}-{logical_id}"
    if attribute in (None, "Name", "FunctionName", "ApiId", "Id"):
        return name
    if attribute.endswith("Arn"):
        return f"arn:aws:{service}:{REGION}:{ACCOUNT}:{name}"
    if attribute.endswith(("Url", "Endpoint")):
        return f"https://{name.lower()}.example.test"
    return f"{name.lower()}.example.test"


def _replace(node: Any, gone: dict[str, str], tag: str) -> Any:
    if isinstance(node, list):
        return [_replace(item, gone, tag) for item in node]
    if not isinstance(node, dict):
        return node
    if set(node) == {"Ref"} and node["Ref"] in gone:
        return _placeholder(node["Ref"], gone[node["Ref"]], None, tag)
    if set(node) == {"Fn::GetAtt"}:
        target = node["Fn::GetAtt"]
        name, attribute = target if isinstance(target, list) else str(target).split(".", 1)
        if name in gone:
            return _placeholder(name, gone[name], attribute, tag)
    if set(node) == {"Fn::Sub"}:
        sub = node["Fn::Sub"]
        text, variables = (sub[0], sub[1]) if isinstance(sub, list) else (sub, {})

        def swap(match: re.Match[str]) -> str:
            name, _, attribute = match.group(1).partition(".")
            if name in gone and name not in variables:
                return _placeholder(name, gone[name], attribute or None, tag)
            return match.group(0)

        text = re.sub(r"\$\{([A-Za-z0-9_.]+)\}", swap, text)
        return {"Fn::Sub": [text, _replace(variables, gone, tag)] if variables else text}
    return {key: _replace(value, gone, tag) for key, value in node.items()}


def rehearsal_template(transformed: dict[str, Any], tag: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The template without the resources LocalStack cannot create, their references replaced by values named with
    `tag` (unique per stack); and what was taken out (logical id -> type)."""
    template = copy.deepcopy(transformed)
    resources = template["Resources"]
    gone = {name: r["Type"] for name, r in resources.items() if r["Type"] in STAND_INS}
    for name in gone:
        del resources[name]
    for resource in resources.values():
        depends = resource.get("DependsOn")
        if depends is not None:
            kept = [d for d in ([depends] if isinstance(depends, str) else depends) if d not in gone]
            if kept:
                resource["DependsOn"] = kept
            else:
                del resource["DependsOn"]
    for resource in resources.values():
        subs = resource.get("Properties", {}).get("DefinitionSubstitutions", {})
        for key, value in subs.items():
            # LocalStack substitutes a Number parameter's Ref as an int, where AWS gives every Ref as a string.
            if isinstance(value, dict) and set(value) == {"Ref"} and not value["Ref"].startswith("AWS::"):
                subs[key] = {"Fn::Join": ["", [value]]}
    template["Resources"] = _replace(resources, gone, tag)
    template["Outputs"] = _replace(template.get("Outputs", {}), gone, tag)
    return template, gone


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", "def handler(event, context):\n    return {}\n")
    return buffer.getvalue()


def upload_artifacts(s3: Any, template: dict[str, Any], bucket: str) -> None:
    """What `sam package` uploads: each state machine's ASL file as it is, code and layers (a stand-in zip)."""
    for resource in template["Resources"].values():
        props = resource.get("Properties", {})
        for location in (props.get("Code"), props.get("Content"), props.get("DefinitionS3Location")):
            if not isinstance(location, dict):
                continue
            key = location.get("S3Key") or location.get("Key")
            body = (ROOT / key).read_bytes() if resource["Type"] == "AWS::StepFunctions::StateMachine" else _zip()
            s3.put_object(Bucket=location.get("S3Bucket") or location.get("Bucket"), Key=key, Body=body)
