"""The documents bucket: presigned POST uploads (size and type in the signed policy), reads and deletes.
boto3 is imported on first use (the API's cold start does not pay for it)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from personal_agent.aws_clients import aws_client
from personal_agent.errors import ServiceUnavailable
from personal_agent.settings import get_settings

UPLOAD_EXPIRES_SECONDS = 900
DOWNLOAD_EXPIRES_SECONDS = 300
KEY_PREFIX = "documents/"
_KEY = re.compile(r"^documents/([0-9a-f-]{36})/([0-9a-f-]{36})/")


@dataclass(frozen=True)
class StoredObject:
    data: bytes
    size: int
    content_type: str
    version: str


def object_key(org_id: UUID, document_id: UUID, filename: str) -> str:
    """`documents/{org}/{document}/{safe filename}`: the bucket notification filters on `documents/`."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", filename).strip("._")[:100] or "document"
    return f"{KEY_PREFIX}{org_id}/{document_id}/{safe}"


def parse_key(key: str) -> tuple[UUID, UUID] | None:
    """(org id, document id) of a document's key; None for any other key (attachments, strays)."""
    match = _KEY.match(key)
    if match is None:
        return None
    try:
        return UUID(match.group(1)), UUID(match.group(2))
    except ValueError:
        return None


def _client() -> Any:
    # SigV4 and the regional endpoint: a presigned POST from the default global endpoint redirects in some regions.
    style = "path" if get_settings().is_local else "auto"
    return aws_client("s3", signature_version="s3v4", s3={"addressing_style": style})


def client() -> Any:
    """The bucket's S3 client (exports write their ZIP with it in parts)."""
    return _client()


def bucket() -> str:
    name = get_settings().documents_bucket
    if not name:
        raise ServiceUnavailable("the documents bucket is not configured (PA_DOCUMENTS_BUCKET)", code="no_bucket")
    return name


def presigned_upload(key: str, content_type: str, size: int) -> dict[str, Any]:
    """A POST form the browser sends the file with: S3 refuses any other content type and any length other than
    1..`size` bytes (the declared size, itself at most 25 MB)."""
    post = _client().generate_presigned_post(
        Bucket=bucket(),
        Key=key,
        Fields={"Content-Type": content_type},
        Conditions=[{"Content-Type": content_type}, ["content-length-range", 1, size]],
        ExpiresIn=UPLOAD_EXPIRES_SECONDS,
    )
    return {"url": post["url"], "fields": post["fields"], "expires_in": UPLOAD_EXPIRES_SECONDS}


def presigned_download(key: str, content_type: str, disposition: str) -> dict[str, Any]:
    """A GET URL for the object, answered with this `Content-Type` and `Content-Disposition` (S3's
    `response-content-*` overrides, part of the signature), for `DOWNLOAD_EXPIRES_SECONDS`."""
    params = {
        "Bucket": bucket(),
        "Key": key,
        "ResponseContentType": content_type,
        "ResponseContentDisposition": disposition,
    }
    url = _client().generate_presigned_url("get_object", Params=params, ExpiresIn=DOWNLOAD_EXPIRES_SECONDS)
    return {"url": url, "expires_in": DOWNLOAD_EXPIRES_SECONDS}


def read_object(key: str, max_bytes: int) -> StoredObject | None:
    """The object, or None if it is gone; `data` is empty when it is larger than `max_bytes` (not downloaded)."""
    from botocore.exceptions import ClientError

    args: dict[str, Any] = {"Bucket": bucket(), "Key": key}
    try:
        head = _client().head_object(**args)
        size = int(head["ContentLength"])
        data = b"" if size > max_bytes else _client().get_object(**args)["Body"].read()
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
            return None
        raise
    found = head.get("VersionId") or head.get("ETag", "").strip('"')
    return StoredObject(data, size, str(head.get("ContentType", "")), str(found))


def put_object(key: str, data: bytes, content_type: str) -> None:
    """Store bytes the platform made itself (a sandbox's output file), never a caller's upload."""
    _client().put_object(Bucket=bucket(), Key=key, Body=data, ContentType=content_type)


def delete_object(key: str) -> None:
    """Delete the object (every version on a versioned bucket is left to the lifecycle rule)."""
    _client().delete_object(Bucket=bucket(), Key=key)


def open_object(key: str) -> Any | None:
    """The object's body as a stream to read in chunks (`iter_chunks`), or None when it is gone."""
    from botocore.exceptions import ClientError

    try:
        return _client().get_object(Bucket=bucket(), Key=key)["Body"]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
            return None
        raise


def delete_every_version(key: str) -> None:
    """The object gone for good: every version of it (the bucket is versioned; a plain delete would leave it behind
    as a noncurrent version until the lifecycle rule)."""
    s3, name = _client(), bucket()
    listed = s3.list_object_versions(Bucket=name, Prefix=key)
    for version in [*listed.get("Versions", []), *listed.get("DeleteMarkers", [])]:
        if version["Key"] == key:
            s3.delete_object(Bucket=name, Key=key, VersionId=version["VersionId"])
