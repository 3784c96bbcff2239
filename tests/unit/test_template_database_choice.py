"""template.yaml's Database=external|aurora choice: the Rules refuse the combinations that cannot work (evaluated
here as CloudFormation evaluates them before a deploy), and aurora wires the functions, secrets and migrations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from personal_agent.local.lambda_registry import load_template

TEMPLATE = load_template(Path(__file__).resolve().parents[2] / "template.yaml")
UPSTASH = {"UpstashRedisRestUrl": "https://t.upstash.io", "UpstashRedisTokenSecretArn": "arn:aws:secretsmanager:x"}
BASE = {"OidcIssuer": "https://id.example.com", **UPSTASH}


def _value(expr: Any, params: dict[str, Any]) -> Any:
    if not isinstance(expr, dict):
        return expr
    ((name, arg),) = expr.items()
    if name == "Ref":
        spec = TEMPLATE["Parameters"][arg]
        value = params.get(arg, spec.get("Default", ""))
        return str(value).split(",") if spec["Type"] == "CommaDelimitedList" else str(value)
    args = [_value(a, params) for a in arg]
    if name == "Fn::EachMemberEquals":
        return all(member == args[1] for member in args[0])
    return {
        "Fn::Equals": lambda: args[0] == args[1],
        "Fn::Not": lambda: not args[0],
        "Fn::And": lambda: all(args),
        "Fn::Or": lambda: any(args),
    }[name]()


def refusals(**params: Any) -> list[str]:
    """The AssertDescriptions CloudFormation would answer a deploy with `params` with."""
    merged = {**BASE, **params}
    refused = []
    for rule in TEMPLATE["Rules"].values():
        if "RuleCondition" in rule and not _value(rule["RuleCondition"], merged):
            continue
        refused += [a["AssertDescription"] for a in rule["Assertions"] if not _value(a["Assert"], merged)]
    return refused


def test_the_usual_choices_are_accepted() -> None:
    assert refusals() == []
    assert refusals(Database="aurora", AuroraMaxCapacity=8) == []
    assert refusals(DatabaseSecretArn="arn:app", DatabaseAdminSecretArn="arn:owner") == []
    assert (
        refusals(MeteringBucketName="ops", MeteringBusArn="arn:aws:events:us-east-1:123456789012:event-bus/ops") == []
    )


@pytest.mark.parametrize(
    ("params", "said"),
    [
        ({"Database": "aurora", "DatabaseSecretArn": "arn:app"}, "leave DatabaseSecretArn"),
        ({"Database": "aurora", "DatabaseHost": "db.example.com"}, "leave DatabaseSecretArn, DatabaseHost"),
        ({"Database": "aurora", "VpcSubnetIds": "subnet-1,subnet-2"}, "creates the VPC"),
        ({"Database": "aurora", "RedisUrl": "rediss://r:6379", "UpstashRedisRestUrl": ""}, "use UpstashRedisRestUrl"),
        ({"DatabaseAdminSecretArn": "arn:owner"}, "needs DatabaseSecretArn"),
        ({"MeteringBusArn": "arn:aws:events:us-east-1:123456789012:event-bus/ops"}, "needs MeteringBucketName"),
    ],
)
def test_combinations_that_cannot_work_are_refused(params: dict[str, str], said: str) -> None:
    assert any(said in text for text in refusals(**params)), refusals(**params)


def test_aurora_scales_to_zero_and_the_functions_reach_it() -> None:
    resources = TEMPLATE["Resources"]
    scaling = resources["AuroraCluster"]["Properties"]["ServerlessV2ScalingConfiguration"]
    # Without the RDS Proxy (AuroraProxy=false, the default; with it: test_template_database_proxy.py).
    assert scaling == {
        "MinCapacity": {"Fn::If": ["UseAuroraProxy", 0.5, 0]},
        "MaxCapacity": {"Ref": "AuroraMaxCapacity"},
        "SecondsUntilAutoPause": {
            "Fn::If": ["UseAuroraProxy", {"Ref": "AWS::NoValue"}, {"Ref": "AuroraSecondsUntilAutoPause"}]
        },
    }
    assert resources["AuroraWriter"]["Properties"]["DBInstanceClass"] == "db.serverless"
    vpc = TEMPLATE["Globals"]["Function"]["VpcConfig"]["Fn::If"]
    assert vpc[2]["Fn::If"][0] == "UseAurora"  # every function, unless the operator gave subnets of their own
    ingress = resources["DatabaseSecurityGroup"]["Properties"]["SecurityGroupIngress"]
    assert ingress == [
        {
            "IpProtocol": "tcp",
            "FromPort": 5432,
            "ToPort": 5432,
            "SourceSecurityGroupId": {"Ref": "FunctionsSecurityGroup"},
            "Description": "the functions",
        }
    ]
    host = TEMPLATE["Globals"]["Function"]["Environment"]["Variables"]["PA_DATABASE_HOST"]["Fn::If"]
    assert host[2]["Fn::If"][:2] == ["UseAurora", {"Fn::GetAtt": "AuroraCluster.Endpoint.Address"}]


def test_every_deploy_runs_the_migrations_as_the_owner_with_the_functions_code_as_revision() -> None:
    resources = TEMPLATE["Resources"]
    assert TEMPLATE["Conditions"]["RunMigrations"] == {
        "Fn::Or": [{"Condition": "UseAurora"}, {"Fn::Not": [{"Fn::Equals": [{"Ref": "DatabaseAdminSecretArn"}, ""]}]}]
    }
    migrations = resources["DatabaseMigrations"]
    assert migrations["Condition"] == resources["MigrateFunction"]["Condition"] == "RunMigrations"
    props = migrations["Properties"]
    assert props["Revision"] == {"Ref": "MigrateFunction.Version"}
    assert props["AdminSecretArn"]["Fn::If"][1] == {"Fn::GetAtt": "AuroraCluster.MasterUserSecret.SecretArn"}
    readable = [
        p["AWSSecretsManagerGetSecretValuePolicy"]["SecretArn"]
        for p in resources["MigrateFunction"]["Properties"]["Policies"]
    ]
    assert props["AdminSecretArn"] in readable and props["AppSecretArn"] in readable
    assert "migrations" in (Path(__file__).resolve().parents[2] / "functions" / "migrate" / "Makefile").read_text()
