"""Upload the built web chat (frontend/dist) to the stack's bucket and refresh CloudFront (`make deploy`).

The stack comes from samconfig.toml (written by `sam deploy --guided`) unless --stack-name says otherwise.
index.html is never cached by browsers, so a deploy shows at once; Vite's hashed assets are immutable.
Old assets stay in the bucket: a tab opened before the deploy may still ask for them.
"""

from __future__ import annotations

import argparse
import mimetypes
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
SHORT = "public, max-age=300"
TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".webmanifest": "application/manifest+json"}


def cache_control(relative: str) -> str:
    if relative == "index.html":
        return REVALIDATE
    if relative.startswith("assets/"):
        return IMMUTABLE
    return SHORT


def content_type(path: Path) -> str:
    return TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def upload(dist: Path, bucket: str, s3: Any) -> list[str]:
    """Put every file of `dist`, assets first and index.html last (so it never points at missing files)."""
    files = sorted((p for p in dist.rglob("*") if p.is_file()), key=lambda p: (p.name == "index.html", str(p)))
    keys = []
    for path in files:
        key = path.relative_to(dist).as_posix()
        s3.put_object(
            Bucket=bucket,
            Key=key,
            Body=path.read_bytes(),
            ContentType=content_type(path),
            CacheControl=cache_control(key),
        )
        keys.append(key)
    return keys


def stack_from_samconfig(config_env: str) -> tuple[str | None, str | None]:
    path = ROOT / "samconfig.toml"
    if not path.is_file():
        return None, None
    params = tomllib.loads(path.read_text()).get(config_env, {}).get("deploy", {}).get("parameters", {})
    return params.get("stack_name"), params.get("region")


def main(argv: list[str] | None = None) -> int:
    import boto3

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack-name")
    parser.add_argument("--region")
    parser.add_argument("--config-env", default="default", help="samconfig.toml environment (default: default)")
    parser.add_argument("--dist", type=Path, default=ROOT / "frontend" / "dist")
    args = parser.parse_args(argv)
    stack, region = stack_from_samconfig(args.config_env)
    stack, region = args.stack_name or stack, args.region or region
    if not stack:
        sys.stderr.write("publish_web: no stack name (run `sam deploy --guided` first or pass --stack-name)\n")
        return 2
    if not (args.dist / "index.html").is_file():
        sys.stderr.write(f"publish_web: {args.dist}/index.html is missing: build the web chat (make frontend)\n")
        return 2
    session = boto3.Session(region_name=region)
    described = session.client("cloudformation").describe_stacks(StackName=stack)["Stacks"][0]
    outputs = {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}
    keys = upload(args.dist, outputs["WebBucketName"], session.client("s3"))
    session.client("cloudfront").create_invalidation(
        DistributionId=outputs["WebDistributionId"],
        InvalidationBatch={"Paths": {"Quantity": 1, "Items": ["/*"]}, "CallerReference": f"publish-{time.time_ns()}"},
    )
    bucket = outputs["WebBucketName"]
    sys.stdout.write(f"published {len(keys)} files to s3://{bucket}; web chat: {outputs.get('WebUrl')}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
