"""The deployable template, built once for every tenant: `sam build` and `sam package`, or a file given as is.

CloudFormation takes a template body up to 51,200 bytes; a larger one is uploaded to the artifact bucket under
its content hash and passed by URL.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from personal_agent.tenants.stacks import s3_client

MAX_TEMPLATE_BODY = 51_200
REPO = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class DeployableTemplate:
    """How to hand the template to CloudFormation (`TemplateBody` or `TemplateURL`) and its content hash."""

    arguments: dict[str, str]
    sha256: str


def build_and_package(artifact_bucket: str, region: str | None) -> Path:
    """`make build` (sam build, layers included), then `sam package` to the artifact bucket; the packaged path."""
    subprocess.run(["make", "build"], cwd=REPO, check=True)
    packaged = REPO / ".aws-sam" / "packaged.yaml"
    command = [str(REPO / ".tools" / "sam" / "bin" / "sam"), "package", "--s3-bucket", artifact_bucket]
    command += ["--template-file", str(REPO / ".aws-sam" / "build" / "template.yaml")]
    command += ["--output-template-file", str(packaged)] + (["--region", region] if region else [])
    subprocess.run(command, cwd=REPO, check=True, env={**os.environ, "SAM_CLI_TELEMETRY": "0"})
    return packaged


def deployable(path: Path, artifact_bucket: str | None, region: str | None) -> DeployableTemplate:
    """The template at `path`, inline when small enough, else uploaded to `artifact_bucket`."""
    body = path.read_bytes()
    digest = hashlib.sha256(body).hexdigest()
    if len(body) <= MAX_TEMPLATE_BODY:
        return DeployableTemplate({"TemplateBody": body.decode()}, digest)
    if not artifact_bucket:
        raise ValueError(f"{path} is over {MAX_TEMPLATE_BODY} bytes: give --artifact-bucket to upload it")
    key = f"pa-templates/{digest}{path.suffix or '.yaml'}"
    client = s3_client(region)
    client.put_object(Bucket=artifact_bucket, Key=key, Body=body)
    location = client.meta.region_name or "us-east-1"
    return DeployableTemplate({"TemplateURL": f"https://{artifact_bucket}.s3.{location}.amazonaws.com/{key}"}, digest)


def platform_version() -> str:
    """This checkout's version for the `pa:version` tag: the package version and, in a git checkout, the commit."""
    try:
        label = version("personal-agent")
    except PackageNotFoundError:
        label = "0"
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    return f"{label}+{done.stdout.strip()}" if done.returncode == 0 and done.stdout.strip() else label
