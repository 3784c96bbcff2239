"""moto in server mode (its own process, as an AWS endpoint would be) and the template made deployable on it.

moto runs no SAM transform, models only some resource types (it skips the others with a warning) and reads a
KMS key's tags as the KMS API spells them, and its update of a Lambda function with layers fails (it passes the
layer object where the ARN belongs), and an update adds the resources whose condition is false. `for_moto` adapts
a transformed template to that, and nothing else: for the parameters the tenants use, resources and outputs
whose condition is false are left out, outputs that name a resource moto does not model are dropped, KMS tags
are renamed, functions' layers dropped, and a role's conditional policy whose branch is `AWS::NoValue` left
out (moto keeps it as None and fails).
"""

from __future__ import annotations

import copy
import io
import json
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from personal_agent.local.ports import free_port
from tests.process_output import follow_output, wait_for_marker

MOTO_SERVER = Path(sys.executable).parent / "moto_server"


@contextmanager
def moto_server(log: Path) -> Iterator[str]:
    """A moto server process on a free port; its endpoint URL."""
    port = free_port()
    process = subprocess.Popen(
        [str(MOTO_SERVER), "-p", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    listening = follow_output(process, log, "Running on http")  # werkzeug's line once the socket listens
    endpoint = f"http://127.0.0.1:{port}"
    try:
        wait_for_marker(process, listening, log, "moto_server", timeout=30.0)
        yield endpoint
    finally:
        process.terminate()
        process.wait(timeout=10)


def _names(value: Any) -> set[str]:
    text = json.dumps(value)
    found = set()
    for marker in ('{"Ref": "', '{"Fn::GetAtt": ["', "${"):
        for chunk in text.split(marker)[1:]:
            found.add(chunk.split('"', 1)[0].split("}", 1)[0].split(".", 1)[0])
    return found


def _evaluate(value: Any, template: dict[str, Any], parameters: dict[str, str]) -> Any:
    """The value of a condition expression (Equals, Not, And, Or, Condition, Ref, Join) for `parameters`."""
    if not isinstance(value, dict):
        return value
    ((name, arg),) = value.items()
    if name == "Ref":
        default = template["Parameters"].get(arg, {}).get("Default", "")
        given = parameters.get(arg, default)
        kind = template["Parameters"].get(arg, {}).get("Type", "")
        return str(given).split(",") if kind == "CommaDelimitedList" else str(given)
    if name == "Condition":
        return _evaluate(template["Conditions"][arg], template, parameters)
    args = [_evaluate(a, template, parameters) for a in (arg if isinstance(arg, list) else [arg])]
    if name == "Fn::Join":
        return args[0].join(args[1]) if isinstance(args[1], list) else args[1]
    operations = {
        "Fn::Equals": lambda: str(args[0]) == str(args[1]),
        "Fn::Not": lambda: not args[0],
        "Fn::And": lambda: all(args),
        "Fn::Or": lambda: any(args),
    }
    return operations[name]()


def for_moto(template: dict[str, Any], parameters: dict[str, str]) -> dict[str, Any]:
    """`template` (already transformed) adapted to what moto's CloudFormation can create with `parameters`."""
    from moto.cloudformation.parsing import resource_class_from_type

    adapted = copy.deepcopy(template)
    conditions = {k: bool(_evaluate(v, adapted, parameters)) for k, v in adapted.get("Conditions", {}).items()}
    adapted["Resources"] = {k: r for k, r in adapted["Resources"].items() if conditions.get(r.get("Condition"), True)}
    adapted["Outputs"] = {
        k: o for k, o in adapted.get("Outputs", {}).items() if conditions.get(o.get("Condition"), True)
    }
    resources = adapted["Resources"]
    unmodelled = {name for name, r in resources.items() if resource_class_from_type(r["Type"]) is None}
    adapted["Outputs"] = {k: o for k, o in adapted.get("Outputs", {}).items() if not _names(o["Value"]) & unmodelled}
    for resource in resources.values():
        if resource["Type"] == "AWS::IAM::Role" and "Policies" in resource.get("Properties", {}):
            resource["Properties"]["Policies"] = [
                item for item in resource["Properties"]["Policies"] if not _no_value(item, conditions)
            ]
        if resource["Type"] == "AWS::Lambda::Function":
            resource["Properties"].pop("Layers", None)
        if resource["Type"] == "AWS::KMS::Key" and "Tags" in resource.get("Properties", {}):
            tags = resource["Properties"]["Tags"]
            resource["Properties"]["Tags"] = [{"TagKey": t["Key"], "TagValue": t["Value"]} for t in tags]
    return adapted


def _no_value(item: Any, conditions: dict[str, bool]) -> bool:
    """An `Fn::If` list item whose chosen branch is `AWS::NoValue` (moto keeps it, as None, and then fails)."""
    if not (isinstance(item, dict) and list(item) == ["Fn::If"]):
        return False
    condition, when_true, when_false = item["Fn::If"]
    return (when_true if conditions[condition] else when_false) == {"Ref": "AWS::NoValue"}


def upload_code(s3: Any, template: dict[str, Any], bucket: str, asl: Path) -> None:
    """Put a small zip at every S3 code location the template names and the ASL file at the state machine's (what
    `sam package` would have uploaded)."""
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("app.py", "def handler(event, context):\n    return {}\n")
    for resource in template["Resources"].values():
        props = resource.get("Properties", {})
        for key in ("Code", "Content"):
            location = props.get(key)
            if isinstance(location, dict) and location.get("S3Bucket") == bucket:
                s3.put_object(Bucket=bucket, Key=location["S3Key"], Body=archive.getvalue())
        definition = props.get("DefinitionS3Location")
        if isinstance(definition, dict) and definition.get("Bucket") == bucket:
            s3.put_object(Bucket=bucket, Key=definition["Key"], Body=asl.read_bytes())
