"""template.yaml's RDS Proxy (`AuroraProxy=true`, issue 35): it exists only with the Aurora the stack creates,
requires TLS, pools that cluster's connections, and the functions connect through it without server-side prepared
statements (which would pin every connection). Conditions and rules are evaluated as CloudFormation evaluates them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from personal_agent.local.lambda_registry import load_template

TEMPLATE = load_template(Path(__file__).resolve().parents[2] / "template.yaml")
RESOURCES = TEMPLATE["Resources"]
PROXY_RESOURCES = ("DatabaseProxy", "DatabaseProxyTargets", "DatabaseProxyRole", "DatabaseProxySecurityGroup")
UPSTASH = {"UpstashRedisRestUrl": "https://t.upstash.io", "UpstashRedisTokenSecretArn": "arn:aws:secretsmanager:x"}
BASE = {"OidcIssuer": "https://id.example.com", **UPSTASH}


def _value(expr: Any, params: dict[str, Any]) -> Any:
    """A condition or a rule's assertion for `params` (Ref, Condition, Equals, Not, And, Or, EachMemberEquals)."""
    if not isinstance(expr, dict):
        return expr
    ((name, arg),) = expr.items()
    if name == "Ref":
        spec = TEMPLATE["Parameters"][arg]
        value = str(params.get(arg, spec.get("Default", "")))
        return value.split(",") if spec["Type"] == "CommaDelimitedList" else value
    if name == "Condition":
        return _value(TEMPLATE["Conditions"][arg], params)
    args = [_value(a, params) for a in arg]
    if name == "Fn::Equals":
        return args[0] == args[1]
    if name == "Fn::EachMemberEquals":
        return all(member == args[1] for member in args[0])
    if name == "Fn::Not":
        return not args[0]
    return all(args) if name == "Fn::And" else any(args)


def _choose(expr: Any, params: dict[str, Any]) -> Any:
    """`expr` with every Fn::If resolved for `params` (what the deployed stack would hold)."""
    if isinstance(expr, list):
        return [_choose(e, params) for e in expr]
    if not isinstance(expr, dict):
        return expr
    if list(expr) == ["Fn::If"]:
        condition, yes, no = expr["Fn::If"]
        return _choose(yes if _value({"Condition": condition}, {**BASE, **params}) else no, params)
    return {k: _choose(v, params) for k, v in expr.items()}


def created(**params: Any) -> set[str]:
    """The logical ids of the resources a deploy with `params` creates."""
    merged = {**BASE, **params}
    return {k for k, r in RESOURCES.items() if "Condition" not in r or _value({"Condition": r["Condition"]}, merged)}


def refusals(**params: Any) -> list[str]:
    merged = {**BASE, **params}
    refused = []
    for rule in TEMPLATE["Rules"].values():
        if "RuleCondition" in rule and not _value(rule["RuleCondition"], merged):
            continue
        refused += [a["AssertDescription"] for a in rule["Assertions"] if not _value(a["Assert"], merged)]
    return refused


def function_env(**params: Any) -> dict[str, Any]:
    return dict(_choose(TEMPLATE["Globals"]["Function"]["Environment"]["Variables"], params))


@pytest.mark.parametrize(
    ("params", "with_proxy"),
    [
        ({}, False),
        ({"Database": "aurora"}, False),
        ({"Database": "aurora", "AuroraProxy": "true"}, True),
        ({"DatabaseHost": "proxy.example.com", "DatabaseSecretArn": "arn:app"}, False),
    ],
)
def test_the_proxy_exists_only_when_asked_for_with_own_aurora(params: dict[str, str], with_proxy: bool) -> None:
    made = created(**params)
    assert {name in made for name in (*PROXY_RESOURCES, "DatabaseFromProxyIngress")} == {with_proxy}
    assert refusals(**params) == []


def test_a_proxy_without_the_stacks_aurora_is_refused() -> None:
    assert any("Database=aurora" in said for said in refusals(AuroraProxy="true")), refusals(AuroraProxy="true")
    assert not {*PROXY_RESOURCES} & created(AuroraProxy="true")


def test_the_proxy_requires_tls_and_logs_in_with_the_app_secret() -> None:
    proxy = RESOURCES["DatabaseProxy"]["Properties"]
    assert proxy["EngineFamily"] == "POSTGRESQL"
    assert proxy["RequireTLS"] is True
    aurora = {"Database": "aurora", "AuroraProxy": "true"}
    (auth,) = _choose(proxy["Auth"], aurora)
    assert auth["AuthScheme"] == "SECRETS" and auth["SecretArn"] == {"Ref": "DatabaseUrlSecret"}
    # The role the proxy reads that secret with may read it and nothing else of Secrets Manager.
    role = RESOURCES["DatabaseProxyRole"]["Properties"]
    assert role["AssumeRolePolicyDocument"]["Statement"][0]["Principal"] == {"Service": "rds.amazonaws.com"}
    assert proxy["RoleArn"] == {"Fn::GetAtt": "DatabaseProxyRole.Arn"}
    statements = [s for p in role["Policies"] for s in p["PolicyDocument"]["Statement"]]
    reads = [s for s in statements if str(s["Action"]).startswith("secretsmanager:")]
    assert [(s["Action"], _choose(s["Resource"], aurora)) for s in reads] == [
        ("secretsmanager:GetSecretValue", {"Ref": "DatabaseUrlSecret"})
    ]


def test_the_proxy_pools_the_aurora_cluster_in_its_private_subnets() -> None:
    targets = RESOURCES["DatabaseProxyTargets"]
    assert targets["Properties"]["DBProxyName"] == {"Ref": "DatabaseProxy"}
    assert targets["Properties"]["DBClusterIdentifiers"] == [{"Ref": "AuroraCluster"}]
    assert targets["DependsOn"] == "AuroraWriter"
    proxy = RESOURCES["DatabaseProxy"]["Properties"]
    assert proxy["VpcSubnetIds"] == RESOURCES["AuroraSubnetGroup"]["Properties"]["SubnetIds"]
    # The functions reach the proxy, the proxy reaches Aurora on 5432, and nothing else is opened.
    group = RESOURCES["DatabaseProxySecurityGroup"]["Properties"]
    assert proxy["VpcSecurityGroupIds"] == [{"Ref": "DatabaseProxySecurityGroup"}]
    assert [r["SourceSecurityGroupId"] for r in group["SecurityGroupIngress"]] == [{"Ref": "FunctionsSecurityGroup"}]
    assert [(r["DestinationSecurityGroupId"], r["FromPort"]) for r in group["SecurityGroupEgress"]] == [
        ({"Ref": "DatabaseSecurityGroup"}, 5432)
    ]
    ingress = RESOURCES["DatabaseFromProxyIngress"]["Properties"]
    assert ingress["GroupId"] == {"Ref": "DatabaseSecurityGroup"}
    assert ingress["SourceSecurityGroupId"] == {"Ref": "DatabaseProxySecurityGroup"}


def test_the_functions_connect_through_the_proxy_unprepared_and_aurora_stops_pausing() -> None:
    proxied = function_env(Database="aurora", AuroraProxy="true")
    assert proxied["PA_DATABASE_HOST"] == {"Fn::GetAtt": "DatabaseProxy.Endpoint"}
    assert proxied["PA_DATABASE_PREPARED_STATEMENTS"] == "false"
    direct = function_env(Database="aurora")
    assert direct["PA_DATABASE_HOST"] == {"Fn::GetAtt": "AuroraCluster.Endpoint.Address"}
    assert direct["PA_DATABASE_PREPARED_STATEMENTS"] == "true"
    # A DatabaseHost of the operator's own may be a proxy too: unprepared there as well.
    theirs = function_env(DatabaseHost="proxy.example.com", DatabaseSecretArn="arn:app")
    assert (theirs["PA_DATABASE_HOST"], theirs["PA_DATABASE_PREPARED_STATEMENTS"]) == ({"Ref": "DatabaseHost"}, "false")
    # Migrations keep going to the cluster as the owner, whose secret the proxy does not hold.
    migrations = _choose(RESOURCES["DatabaseMigrations"]["Properties"]["DatabaseHost"], {"Database": "aurora"})
    assert migrations == {"Fn::GetAtt": "AuroraCluster.Endpoint.Address"}
    # The proxy keeps connections open, so Aurora cannot pause behind it: its floor is 0.5 ACU there, 0 without.
    scaling = RESOURCES["AuroraCluster"]["Properties"]["ServerlessV2ScalingConfiguration"]
    assert _choose(scaling, {"Database": "aurora", "AuroraProxy": "true"})["MinCapacity"] == 0.5
    assert _choose(scaling, {"Database": "aurora"})["MinCapacity"] == 0
