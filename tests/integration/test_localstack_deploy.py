"""The deploy rehearsal (tests/deploy_rehearsal.py): `template.yaml`, packaged and transformed by SAM's translator,
created as CloudFormation stacks in LocalStack, once per StepsTaskMode. What linting cannot see fails here:
references between resources, IAM policy shapes, the ASL's definition substitutions, queue redrive wiring. The
resource types LocalStack cannot create here are listed with the reason, never skipped silently."""

from __future__ import annotations

import contextlib
import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
import pytest
from botocore.exceptions import WaiterError

from tests.deploy_rehearsal import ROOT, STAND_INS, rehearsal_template, sam_transform, upload_artifacts
from tests.emulators import Emulator

PARAMETERS = {"OidcIssuer": "https://issuer.example.test", "RedisUrl": "rediss://cache.example.test:6379/0"}


def _client(emulator: Emulator, service: str) -> Any:
    return boto3.client(service, endpoint_url=emulator.endpoint_url, region_name="us-east-1")


def _deploy(emulator: Emulator, transformed: dict[str, Any], bucket: str, mode: str) -> dict[str, Any]:
    tenant = f"r{uuid.uuid4().hex[:8]}"
    template, gone = rehearsal_template(transformed, tenant)
    s3, cfn = _client(emulator, "s3"), _client(emulator, "cloudformation")
    upload_artifacts(s3, template, bucket)
    s3.put_object(Bucket=bucket, Key=f"{tenant}.json", Body=json.dumps(template).encode())
    params = PARAMETERS | {"TenantId": tenant, "StepsTaskMode": mode}
    cfn.create_stack(
        StackName=f"pa-{tenant}",
        TemplateURL=f"{emulator.endpoint_url}/{bucket}/{tenant}.json",
        Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in params.items()],
        Capabilities=["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"],
        DisableRollback=True,
    )
    # CloudFormation's own waiter, as `sam deploy` waits; a failed create ends it too, and the test's assertions
    # then name the resources that failed.
    with contextlib.suppress(WaiterError):
        cfn.get_waiter("stack_create_complete").wait(
            StackName=f"pa-{tenant}", WaiterConfig={"Delay": 1, "MaxAttempts": 240}
        )
    stack = cfn.describe_stacks(StackName=f"pa-{tenant}")["Stacks"][0]
    resources = cfn.describe_stack_resources(StackName=f"pa-{tenant}")["StackResources"]
    return {"stack": stack, "resources": resources, "template": template, "gone": gone, "mode": mode}


@pytest.fixture(scope="module")
def rehearsals(localstack_aws: Emulator) -> dict[str, dict[str, Any]]:
    bucket = f"pa-artifacts-{uuid.uuid4().hex[:8]}"
    _client(localstack_aws, "s3").create_bucket(Bucket=bucket)
    transformed = sam_transform(ROOT / "template.yaml", bucket, localstack_aws.endpoint_url)
    with ThreadPoolExecutor(2) as pool:
        done = pool.map(lambda mode: _deploy(localstack_aws, transformed, bucket, mode), ["lambda", "activity"])
        return {r["mode"]: r for r in done}


@pytest.mark.localstack
@pytest.mark.parametrize("mode", ["lambda", "activity"])
def test_the_stack_deploys_with_every_resource_localstack_can_create(
    rehearsals: dict[str, dict[str, Any]], mode: str
) -> None:
    rehearsal = rehearsals[mode]
    failed = {r["LogicalResourceId"]: r.get("ResourceStatusReason") for r in rehearsal["resources"]}
    failed = {k: v for k, v in failed.items() if k not in _complete(rehearsal)}
    assert rehearsal["stack"]["StackStatus"] == "CREATE_COMPLETE", failed
    assert not failed
    created = _complete(rehearsal)
    # Every resource without a condition was really created: nothing is left out except the stand-ins below.
    unconditional = {k for k, r in rehearsal["template"]["Resources"].items() if "Condition" not in r}
    assert unconditional <= created, sorted(unconditional - created)
    stand_ins = sorted({(kind, STAND_INS[kind]) for kind in rehearsal["gone"].values()})
    print(f"{mode}: {len(created)} resources created; not creatable in LocalStack here:")
    for kind, why in stand_ins:
        print(f"  {kind}: {why}")
    kinds = {kind for kind, _ in stand_ins}
    assert {"AWS::Lambda::Function", "AWS::ApiGatewayV2::Api", "AWS::CloudFront::Distribution"} <= kinds
    created_kinds = {r["ResourceType"] for r in rehearsal["resources"]}
    assert not kinds & created_kinds
    expected = {"AWS::StepFunctions::StateMachine", "AWS::IAM::Role", "AWS::SQS::Queue", "AWS::KMS::Key"}
    assert expected <= created_kinds
    assert ("AWS::StepFunctions::Activity" in created_kinds) == (mode == "activity")


def _complete(rehearsal: dict[str, Any]) -> set[str]:
    return {r["LogicalResourceId"] for r in rehearsal["resources"] if r["ResourceStatus"] == "CREATE_COMPLETE"}


def _physical(rehearsal: dict[str, Any], logical_id: str) -> str:
    return next(r["PhysicalResourceId"] for r in rehearsal["resources"] if r["LogicalResourceId"] == logical_id)


@pytest.mark.localstack
@pytest.mark.parametrize("mode", ["lambda", "activity"])
def test_the_state_machine_gets_the_asl_with_the_substitutions_of_its_mode(
    rehearsals: dict[str, dict[str, Any]], localstack_aws: Emulator, mode: str
) -> None:
    rehearsal = rehearsals[mode]
    sfn = _client(localstack_aws, "stepfunctions")
    arn = _physical(rehearsal, "AgentRunStateMachine")
    states = json.loads(sfn.describe_state_machine(stateMachineArn=arn)["definition"])["States"]
    assert states["Advance"]["TimeoutSeconds"] == 300
    steps_arn = states["Advance"]["Parameters"]["FunctionName"]
    assert steps_arn.startswith("arn:aws:lambda:") and steps_arn.endswith("-StepsFunction")
    callback = states["WaitForApproval"]["Parameters"]["Payload"]
    if mode == "lambda":
        assert states["Advance"]["Resource"] == "arn:aws:states:::lambda:invoke"
        assert states["WaitForApproval"]["Resource"] == "arn:aws:states:::lambda:invoke.waitForTaskToken"
        assert callback["task_token.$"] == "$$.Task.Token"
    else:
        activity = _physical(rehearsal, "StepsActivity")
        assert activity.startswith("arn:aws:states:") and ":activity:" in activity
        tasks = [s for s in states.values() if s["Type"] == "Task"]
        assert tasks and {s["Resource"] for s in tasks} == {activity}
        assert "task_token.$" not in callback and callback["task_token_path"] == "$$.Task.Token"


@pytest.mark.localstack
def test_iam_and_queue_wiring_resolve_to_the_created_resources(
    rehearsals: dict[str, dict[str, Any]], localstack_aws: Emulator
) -> None:
    rehearsal = rehearsals["lambda"]
    iam, sqs = _client(localstack_aws, "iam"), _client(localstack_aws, "sqs")
    machine = _physical(rehearsal, "AgentRunStateMachine")
    role = _physical(rehearsal, "ApiFunctionRole")
    documents = [
        iam.get_role_policy(RoleName=role, PolicyName=name)["PolicyDocument"]
        for name in iam.list_role_policies(RoleName=role)["PolicyNames"]
    ]
    statements = [s for d in documents for s in d["Statement"]]
    starts = [s for s in statements if "states:StartExecution" in json.dumps(s.get("Action"))]
    assert starts and machine in json.dumps(starts)  # the API may start executions of this very state machine
    queue_url = _physical(rehearsal, "IngestQueue")
    redrive = json.loads(
        sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["All"])["Attributes"]["RedrivePolicy"]
    )
    dlq_url = _physical(rehearsal, "IngestDeadLetterQueue")
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    assert redrive["deadLetterTargetArn"] == dlq_arn
