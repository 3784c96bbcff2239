"""`pa tenants deploy / status / diff` as an operator runs them (the `pa` console script in a subprocess) against
moto's CloudFormation in server mode: two tenants from a folder of parameter files, the template transformed
locally (moto runs no SAM transform), and an update that changes only one of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest

from tests.moto_cloudformation import for_moto, moto_server, upload_code
from tests.sam_transform import ARTIFACT_BUCKET, ROOT, transformed_template

PA = Path(sys.executable).parent / "pa"
UPSTASH_TOKEN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:upstash-token-AbCdEf"


# What every tenant here sets that decides the template's conditions (each file adds its own names and URLs).
COMMON_PARAMETERS = {"UpstashRedisRestUrl": "https://tenant.upstash.io", "UpstashRedisTokenSecretArn": UPSTASH_TOKEN}


def _tenant_file(folder: Path, name: str, log_level: str = "INFO") -> None:
    (folder / f"{name}.toml").write_text(
        f"""# {name}: a tenant stack
[parameters]
Stage = "prod"
OidcIssuer = "https://id.{name}.example/realms/{name}"
UpstashRedisRestUrl = "https://{name}.upstash.io"
UpstashRedisTokenSecretArn = "{UPSTASH_TOKEN}"
LogLevel = "{log_level}"
ApiThrottleRateLimit = 20
"""
    )


@dataclass
class Operator:
    folder: Path
    template: Path
    env: dict[str, str]

    def pa(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = [str(PA), "tenants", *args]
        if args[0] in ("deploy", "diff"):
            command += ["--template", str(self.template), "--artifact-bucket", ARTIFACT_BUCKET]
        done = subprocess.run(
            [*command, "--dir", str(self.folder), "--json"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
            cwd=self.folder,
        )
        return done

    def json(self, *args: str) -> Any:
        done = self.pa(*args)
        assert done.returncode == 0, done.stderr + done.stdout
        return json.loads(done.stdout)


@pytest.fixture(scope="module")
def operator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Operator]:
    work = tmp_path_factory.mktemp("tenants")
    with moto_server(work / "moto.log") as endpoint:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PA_"))},
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
        }
        template = for_moto(transformed_template(), COMMON_PARAMETERS)
        s3 = boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        s3.create_bucket(Bucket=ARTIFACT_BUCKET)
        upload_code(s3, template, ARTIFACT_BUCKET, ROOT / "infra" / "statemachines" / "agent_run.asl.json")
        path = work / "packaged.json"
        path.write_text(json.dumps(template, indent=1))
        folder = work / "tenants"
        folder.mkdir()
        for name in ("acme", "globex"):
            _tenant_file(folder, name)
        (folder / "example.toml").write_text("# not a tenant: files named example* are skipped\n")
        yield Operator(folder, path, env)


def _stacks(operator: Operator) -> dict[str, dict[str, Any]]:
    cfn = boto3.client(
        "cloudformation",
        endpoint_url=operator.env["AWS_ENDPOINT_URL"],
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    stacks = {}
    for stack in cfn.describe_stacks()["Stacks"]:
        tags = {t["Key"]: t["Value"] for t in stack.get("Tags", [])}
        stacks[tags.get("pa:tenant", stack["StackName"])] = stack
    return stacks


def _parameters(stack: dict[str, Any]) -> dict[str, str]:
    return {p["ParameterKey"]: p["ParameterValue"] for p in stack.get("Parameters", [])}


def test_deploy_status_and_an_update_of_one_tenant(operator: Operator) -> None:
    assert [r["status"] for r in operator.json("status")] == ["NOT_DEPLOYED", "NOT_DEPLOYED"]

    deployed = operator.json("deploy", "--all", "--parallel", "2")
    assert [(r["tenant"], r["stack_name"], r["action"], r["status"]) for r in deployed] == [
        ("acme", "pa-acme-prod", "created", "CREATE_COMPLETE"),
        ("globex", "pa-globex-prod", "created", "CREATE_COMPLETE"),
    ]
    stacks = _stacks(operator)
    assert set(stacks) == {"acme", "globex"}  # found by their pa:tenant tag; the example file made nothing
    assert _parameters(stacks["acme"])["OidcIssuer"] == "https://id.acme.example/realms/acme"
    assert _parameters(stacks["globex"])["TenantId"] == "globex"

    status = {r["tenant"]: r for r in operator.json("status")}
    assert {t: r["status"] for t, r in status.items()} == {"acme": "CREATE_COMPLETE", "globex": "CREATE_COMPLETE"}
    assert status["acme"]["version"] and status["acme"]["version"] == status["globex"]["version"]
    assert status["acme"]["last_deploy"].startswith(stacks["acme"]["CreationTime"].date().isoformat())

    # acme turns on debug logs; globex's file is untouched.
    _tenant_file(operator.folder, "acme", log_level="DEBUG")
    diff = operator.json("diff", "acme")
    assert diff["new_stack"] is False and diff["parameters"] == {"LogLevel": ["INFO", "DEBUG"]}
    assert _parameters(_stacks(operator)["acme"])["LogLevel"] == "INFO"  # a diff executes nothing
    assert operator.json("diff", "globex")["parameters"] == {}

    updated = operator.json("deploy", "--all")
    assert {r["tenant"]: r["action"] for r in updated} == {"acme": "updated", "globex": "unchanged"}
    stacks = _stacks(operator)
    assert _parameters(stacks["acme"])["LogLevel"] == "DEBUG"
    assert _parameters(stacks["globex"])["LogLevel"] == "INFO"
    assert stacks["acme"]["StackStatus"] == "UPDATE_COMPLETE" and stacks["globex"]["StackStatus"] == "CREATE_COMPLETE"


def test_one_tenant_by_name_and_bad_input(operator: Operator) -> None:
    missing = operator.pa("deploy", "initech")
    assert missing.returncode == 2 and "no tenant 'initech'" in missing.stderr and "acme, globex" in missing.stderr
    both = operator.pa("deploy", "acme", "--all")
    assert both.returncode == 2 and "name one tenant or give --all" in both.stderr
    (operator.folder / "Bad_Name.toml").write_text("[parameters]\n")
    try:
        bad = operator.pa("status")
        assert bad.returncode == 2 and "Bad_Name.toml" in bad.stderr
    finally:
        (operator.folder / "Bad_Name.toml").unlink()
