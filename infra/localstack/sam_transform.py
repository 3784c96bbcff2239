"""The SAM template as the CloudFormation `sam deploy` would submit: local CodeUri/ContentUri/DefinitionUri become
`s3://BUCKET/<path>` (what `sam package` does after uploading), then SAM's own translator expands the serverless
resources. Run with the SAM CLI's interpreter (.tools/sam/bin/python, which has samtranslator):

    .tools/sam/bin/python infra/localstack/sam_transform.py template.yaml BUCKET ENDPOINT_URL > packaged.json

ENDPOINT_URL is where IAM's managed policies are listed from (LocalStack in the deploy rehearsal)."""

from __future__ import annotations

import json
import sys
from typing import Any

import boto3
from samcli.yamlhelper import parse_yaml_file
from samtranslator.translator.managed_policy_translator import ManagedPolicyLoader
from samtranslator.translator.transform import transform

LOCAL_URIS = {
    "AWS::Serverless::Function": "CodeUri",
    "AWS::Serverless::LayerVersion": "ContentUri",
    "AWS::Serverless::StateMachine": "DefinitionUri",
}


def packaged(template: dict[str, Any], bucket: str) -> dict[str, Any]:
    for resource in template.get("Resources", {}).values():
        key = LOCAL_URIS.get(resource.get("Type", ""))
        props = resource.get("Properties", {})
        uri = props.get(key) if key else None
        if isinstance(uri, str) and not uri.startswith("s3://"):
            props[key] = f"s3://{bucket}/{uri.strip('/')}"
    return template


def main(path: str, bucket: str, endpoint: str) -> None:
    template = packaged(parse_yaml_file(path), bucket)
    iam = boto3.client("iam", endpoint_url=endpoint, region_name="us-east-1")
    sys.stdout.write(json.dumps(transform(template, {}, ManagedPolicyLoader(iam)), default=str))


if __name__ == "__main__":
    main(*sys.argv[1:4])
