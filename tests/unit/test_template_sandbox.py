"""template.yaml's sandbox for `run_python` (CodeExecution=lambda) held to what docs/sandbox.md promises: the
function's role allows its own logs and nothing else (the ENI actions Lambda needs to place it in the subnet aside),
its subnet's one way out of the VPC is an S3 gateway endpoint that admits only GET and PUT of the documents
bucket's sandbox prefix (the presigned URLs the platform makes; no other bucket), its security group lets nothing
in and only HTTPS out, only the engine's functions may invoke it, they are told its name, and they may handle the
sandbox prefix's files the function itself may not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from personal_agent.local.lambda_registry import load_template

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = load_template(ROOT / "template.yaml")
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]
SANDBOX = "SandboxFunction"
ENI_ACTIONS = {
    "ec2:CreateNetworkInterface",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DeleteNetworkInterface",
    "ec2:AssignPrivateIpAddresses",
    "ec2:UnassignPrivateIpAddresses",
}
LOG_ACTIONS = {"logs:CreateLogStream", "logs:PutLogEvents"}


def _props(name: str) -> dict[str, Any]:
    props: dict[str, Any] = RESOURCES[name].get("Properties", {})
    return props


def _refs(value: Any) -> set[str]:
    """Logical ids a value references (Ref, GetAtt, Sub's ${...})."""
    if isinstance(value, dict):
        found: set[str] = set()
        for key, inner in value.items():
            if key == "Ref":
                found.add(str(inner))
            elif key == "Fn::GetAtt":
                found.add(str(inner[0] if isinstance(inner, list) else inner).split(".")[0])
            else:
                found |= _refs(inner)
        return found
    if isinstance(value, list):
        return set().union(*(_refs(v) for v in value)) if value else set()
    return set()


def _statements() -> list[dict[str, Any]]:
    role = _props("SandboxRole")
    return [s for p in role["Policies"] for s in p["PolicyDocument"]["Statement"]]


def test_the_sandbox_exists_only_when_code_execution_is_lambda() -> None:
    sandbox = [n for n, r in RESOURCES.items() if n.startswith("Sandbox")]
    assert {"SandboxFunction", "SandboxRole", "SandboxVpc", "SandboxSubnet", "SandboxSecurityGroup"} <= set(sandbox)
    conditions = {RESOURCES[n].get("Condition") for n in sandbox}
    assert conditions <= {"HasSandbox", "HasSandboxActivities", "HasSandboxStreamDrives"}
    assert TEMPLATE["Conditions"]["HasSandbox"] == {"Fn::Equals": [{"Ref": "CodeExecution"}, "lambda"]}
    assert TEMPLATE["Parameters"]["CodeExecution"]["Default"] == "off"


def test_its_role_allows_its_own_logs_and_nothing_else() -> None:
    props = _props(SANDBOX)
    assert _refs(props["Role"]) == {"SandboxRole"} and "Policies" not in props  # no SAM policy templates either
    role = _props("SandboxRole")
    assert "ManagedPolicyArns" not in role  # not even AWSLambdaBasicExecutionRole (it allows every log group)
    assert role["AssumeRolePolicyDocument"]["Statement"] == [
        {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}
    ]
    allowed: set[str] = set()
    for statement in _statements():
        assert statement["Effect"] == "Allow" and "NotAction" not in statement and "NotResource" not in statement
        actions = set(statement["Action"]) if isinstance(statement["Action"], list) else {statement["Action"]}
        if actions <= LOG_ACTIONS:
            resource = str(statement["Resource"]["Fn::Sub"])
            assert resource.endswith(":log-group:/aws/lambda/${AWS::StackName}-sandbox:*"), resource
        else:
            assert actions <= ENI_ACTIONS, actions  # Lambda's, to put it in the subnet; unreachable from the code
        allowed |= actions
    assert allowed == LOG_ACTIONS | ENI_ACTIONS
    assert not any("*" in action for action in allowed)


def test_its_subnet_has_no_route_out_but_the_sandbox_prefix_of_the_bucket() -> None:
    props = _props(SANDBOX)
    assert props["VpcConfig"] == {
        "SubnetIds": [{"Ref": "SandboxSubnet"}],
        "SecurityGroupIds": [{"Ref": "SandboxSecurityGroup"}],
    }
    assert _refs(_props("SandboxSubnet")["VpcId"]) == {"SandboxVpc"}
    assert _props("SandboxVpc")["EnableDnsSupport"] is False  # no resolver: a DNS query is a way out
    associations = [r["Properties"] for r in RESOURCES.values() if r["Type"] == "AWS::EC2::SubnetRouteTableAssociation"]
    tables = {str(a["RouteTableId"]["Ref"]) for a in associations if _refs(a["SubnetId"]) == {"SandboxSubnet"}}
    assert tables == {"SandboxRouteTable"}
    routes = [r for r in RESOURCES.values() if r["Type"] == "AWS::EC2::Route"]
    assert not [r for r in routes if "SandboxRouteTable" in _refs(r["Properties"]["RouteTableId"])]
    in_its_vpc = {name: r["Type"] for name, r in RESOURCES.items() if "SandboxVpc" in _refs(r.get("Properties", {}))}
    assert set(in_its_vpc.values()) <= {
        "AWS::EC2::Subnet",
        "AWS::EC2::RouteTable",
        "AWS::EC2::SecurityGroup",
        "AWS::EC2::VPCEndpoint",
    }, in_its_vpc  # no internet or NAT gateway, no peering
    endpoints = [name for name, kind in in_its_vpc.items() if kind == "AWS::EC2::VPCEndpoint"]
    assert endpoints == ["SandboxS3Endpoint"]
    assert not [
        r
        for r in RESOURCES.values()
        if r["Type"] == "AWS::EC2::VPCGatewayAttachment" and "SandboxVpc" in _refs(r["Properties"])
    ]


def test_its_one_endpoint_admits_only_the_buckets_sandbox_prefix() -> None:
    endpoint = _props("SandboxS3Endpoint")
    assert endpoint["VpcEndpointType"] == "Gateway"  # a route to S3's addresses, not an interface (no DNS, no ENI)
    assert endpoint["ServiceName"] == {"Fn::Sub": "com.amazonaws.${AWS::Region}.s3"}
    assert endpoint["RouteTableIds"] == [{"Ref": "SandboxRouteTable"}]
    (statement,) = endpoint["PolicyDocument"]["Statement"]  # the default policy would admit every bucket
    assert statement["Effect"] == "Allow" and "NotAction" not in statement and "NotResource" not in statement
    assert sorted(statement["Action"]) == ["s3:GetObject", "s3:PutObject"]  # a presigned GET or PUT of one object
    assert statement["Resource"] == {"Fn::Sub": "${DocumentsBucket.Arn}/sandbox/*"}
    assert "Condition" not in statement


def test_its_security_group_lets_nothing_in_and_only_https_out() -> None:
    group = _props("SandboxSecurityGroup")
    assert "SecurityGroupIngress" not in group
    (egress,) = group["SecurityGroupEgress"]
    assert (egress["IpProtocol"], egress["FromPort"], egress["ToPort"]) == ("tcp", 443, 443)  # its routes: S3's only
    attached = [
        r
        for r in RESOURCES.values()
        if r["Type"] in ("AWS::EC2::SecurityGroupIngress", "AWS::EC2::SecurityGroupEgress")
        and "SandboxSecurityGroup" in _refs(r["Properties"])
    ]
    assert attached == []


def test_the_engines_functions_handle_the_sandbox_prefix_the_function_may_not() -> None:
    policy = RESOURCES["SandboxFilesPolicy"]
    assert policy["Condition"] == "HasSandbox"
    roles = _refs(policy["Properties"]["Roles"]) - {"AWS::NoValue"}
    assert roles == {"RunWorkerFunctionRole", "StepsFunctionRole", "ActivityPollerFunctionRole", "StreamFunctionRole"}
    statements = {s["Sid"]: s for s in policy["Properties"]["PolicyDocument"]["Statement"]}
    prefix = statements["SandboxPrefix"]
    assert prefix["Resource"] == {"Fn::Sub": "${DocumentsBucket.Arn}/sandbox/*"}
    assert "s3:DeleteObjectVersion" in prefix["Action"]  # a run's files go with every version when it ends
    assert statements["ListSandboxPrefixVersions"]["Condition"] == {"StringLike": {"s3:prefix": "sandbox/*"}}
    assert "DocumentsBucket" not in _refs(_props("SandboxRole"))  # the function itself: still its logs only


def test_only_the_engines_functions_may_invoke_it_and_they_know_its_name() -> None:
    permissions = {
        name: r["Properties"]
        for name, r in RESOURCES.items()
        if r["Type"] == "AWS::Lambda::Permission" and _refs(r["Properties"]["FunctionName"]) == {SANDBOX}
    }
    principals = {next(iter(_refs(p["Principal"]))) for p in permissions.values()}
    assert principals == {
        "RunWorkerFunctionRole",
        "StepsFunctionRole",
        "ActivityPollerFunctionRole",
        "StreamFunctionRole",  # when it drives streamed runs
    }
    assert all(p["Action"] == "lambda:InvokeFunction" for p in permissions.values())
    name = _props(SANDBOX)["FunctionName"]
    told = TEMPLATE["Globals"]["Function"]["Environment"]["Variables"]["PA_SANDBOX_FUNCTION"]
    assert told == {"Fn::If": ["HasSandbox", name, ""]}
    assert _props(SANDBOX)["Tracing"] == "PassThrough"  # X-Ray would need a permission the role does not have


def test_its_code_is_the_kernel_and_a_handler_that_imports_nothing_of_the_platform() -> None:
    source = (ROOT / "functions" / "sandbox" / "app.py").read_text()
    assert "personal_agent" not in source.replace("personal_agent/sandbox/kernel.py", "")
    makefile = (ROOT / "functions" / "sandbox" / "Makefile").read_text()
    assert "shared/personal_agent/sandbox/kernel.py" in makefile
    assert "import personal_agent" not in (ROOT / "shared/personal_agent/sandbox/kernel.py").read_text()
    assert _refs(_props(SANDBOX)["Layers"]) == {"SandboxLayer"}
