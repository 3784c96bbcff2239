"""One cached AWS client factory (`personal_agent.aws_clients`): a process makes one client per service, endpoint,
region and options, and no other module of the library makes a boto3 client of its own."""

from __future__ import annotations

import re
from pathlib import Path

from personal_agent.aws_clients import aws_client, aws_client_at

SHARED = Path(__file__).resolve().parents[2] / "shared" / "personal_agent"


def test_a_client_is_made_once_per_service_endpoint_region_and_options() -> None:
    sqs = aws_client_at("sqs", "http://127.0.0.1:1", "us-east-1")
    assert aws_client_at("sqs", "http://127.0.0.1:1", "us-east-1") is sqs
    assert aws_client_at("sqs", "http://127.0.0.1:2", "us-east-1") is not sqs
    assert aws_client_at("sqs", "http://127.0.0.1:1", "eu-west-1").meta.region_name == "eu-west-1"
    timed = aws_client_at("sqs", "http://127.0.0.1:1", "us-east-1", read_timeout=7, retries={"max_attempts": 2})
    assert timed is not sqs and timed.meta.config.read_timeout == 7
    assert aws_client_at("sqs", "http://127.0.0.1:1", "us-east-1", retries={"max_attempts": 2}, read_timeout=7) is timed
    assert aws_client("kms") is aws_client("kms")


def test_no_module_makes_a_boto3_client_of_its_own() -> None:
    making = re.compile(r"boto3\.(client|resource|session)\b|\bSession\(\)\.client\(")
    offenders = [
        str(path.relative_to(SHARED))
        for path in SHARED.rglob("*.py")
        if path.name != "aws_clients.py" and making.search(path.read_text())
    ]
    assert offenders == []
