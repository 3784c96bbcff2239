"""A run's sandbox files in the documents bucket, under `sandbox/{org}/{run}/`: the AWS backend's input files too
large to travel in the invocation (`in/`), the slots the sandbox function uploads a call's large output files to
(`out/`), and a durable run's session record (`session.json`: the cells that succeeded and the input files' keys),
deleted with every version when the run ends (the bucket's lifecycle rule on `sandbox/` is the backstop).

Only the platform's own S3 client touches them. The sandbox function gets presigned URLs the platform made, each
for one object and one method, that expire shortly (`GET_EXPIRES_SECONDS`, and for an output slot the call's
wall-clock limit plus `PUT_MARGIN_SECONDS`): the function's role has no S3 permission at all, and the code it runs
never sees a URL (it cannot open a socket either)."""

from __future__ import annotations

import hashlib
import json
import socket
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID

from personal_agent.knowledge import objects as bucket_objects
from personal_agent.settings import get_settings

PREFIX = "sandbox/"
INLINE_BYTES = 256 * 1024
"""An input or output file up to this size travels inside the invocation (no round trip to S3), as long as the
call's inline files stay under `INLINE_TOTAL_BYTES`; a larger one goes through the bucket."""
INLINE_TOTAL_BYTES = 2**20
GET_EXPIRES_SECONDS = 120
"""What a presigned GET of an input file is good for: the function fetches it as the invocation starts (a VPC
function's cold start included)."""
PUT_MARGIN_SECONDS = 60
MAX_INPUT_BYTES = 25 * 1024 * 1024
RECORD = "session.json"


def configured() -> bool:
    """Whether this deployment has the bucket (without it every file travels inside the invocation)."""
    return bool(get_settings().documents_bucket)


def run_prefix(org_id: UUID | str, run_id: UUID | str) -> str:
    """The run's sandbox prefix: the org first, as every key of the bucket."""
    return f"{PREFIX}{org_id}/{run_id}/"


def input_key(prefix: str, name: str) -> str:
    """The object of the session's input file `name` (a file named again replaces the earlier one)."""
    return f"{prefix}in/{hashlib.sha256(name.encode()).hexdigest()[:32]}"


def output_key(prefix: str, call: str, slot: int) -> str:
    return f"{prefix}out/{call}/{slot}"


def put(key: str, data: bytes) -> None:
    bucket_objects.put_object(key, data, "application/octet-stream")


def read(key: str, max_bytes: int = MAX_INPUT_BYTES) -> bytes | None:
    """The object's bytes; None when it is gone (or larger than `max_bytes`)."""
    found = bucket_objects.read_object(key, max_bytes)
    return found.data if found is not None and len(found.data) == found.size else None


def take(key: str, max_bytes: int) -> bytes | None:
    """An output slot's bytes, the slot deleted (every version) once read; None when nothing was uploaded there."""
    data = read(key, max_bytes)
    if data is not None:
        bucket_objects.delete_every_version(key)
    return data


def presigned_get(key: str) -> str:
    params = {"Bucket": bucket_objects.bucket(), "Key": key}
    s3 = bucket_objects.client()
    url: str = s3.generate_presigned_url("get_object", Params=params, ExpiresIn=GET_EXPIRES_SECONDS)
    return url


def presigned_put(key: str, wall_seconds: float) -> str:
    """A PUT of this one key, for the call's wall-clock limit and a margin (the function uploads after the code ran)."""
    params = {"Bucket": bucket_objects.bucket(), "Key": key}
    expires = int(wall_seconds) + PUT_MARGIN_SECONDS
    url: str = bucket_objects.client().generate_presigned_url("put_object", Params=params, ExpiresIn=expires)
    return url


def addresses(urls: list[str]) -> dict[str, str]:
    """An IPv4 address of each URL's host, resolved here: the sandbox's VPC has no DNS (a resolver is a way out), so
    the function connects to the address and names the host in TLS and HTTP."""
    found: dict[str, str] = {}
    for url in urls:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if host and host not in found:
            port = parts.port or (443 if parts.scheme == "https" else 80)
            found[host] = str(socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_STREAM)[0][4][0])
    return found


def read_record(prefix: str) -> dict[str, Any] | None:
    data = read(prefix + RECORD, 16 * 2**20)
    if data is None:
        return None
    record: dict[str, Any] = json.loads(data)
    return record


def write_record(prefix: str, record: dict[str, Any]) -> None:
    bucket_objects.put_object(prefix + RECORD, json.dumps(record).encode(), "application/json")


def delete_prefix(prefix: str) -> int:
    """Every version of every object under the prefix, gone; how many were deleted."""
    s3, name, deleted = bucket_objects.client(), bucket_objects.bucket(), 0
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=name, Prefix=prefix):
        versions = [*page.get("Versions", []), *page.get("DeleteMarkers", [])]
        batch = [{"Key": v["Key"], "VersionId": v["VersionId"]} for v in versions]
        for start in range(0, len(batch), 1000):
            s3.delete_objects(Bucket=name, Delete={"Objects": batch[start : start + 1000], "Quiet": True})
        deleted += len(batch)
    return deleted
