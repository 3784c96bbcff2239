"""An S3 prefix (the tenant's bucket or ours): every object under it is a document. Its listing carries each
object's ETag, so an unchanged object is not even read; `ObjectCreated`/`ObjectRemoved` events of the bucket
(delivered to the ingest queue) sync one object at a time (`knowledge/source_events.py`)."""

from __future__ import annotations

import asyncio
import mimetypes
from typing import Any

from personal_agent.aws_clients import aws_client
from personal_agent.knowledge.connectors.base import MAX_ITEMS, Fetched, ItemFailed, RemoteItem
from personal_agent.knowledge.formats import MAX_UPLOAD_BYTES, format_of
from personal_agent.knowledge.sources_store import Item, Source

_EXTENSIONS = {".md": "text/markdown", ".markdown": "text/markdown", ".eml": "message/rfc822", ".csv": "text/csv"}


def content_type_of(key: str, declared: str) -> str:
    """The object's declared type when documents of it are accepted, else the one its extension names."""
    declared = declared.split(";", 1)[0].strip().lower()
    if format_of(declared) is not None:
        return declared
    suffix = "." + key.rsplit(".", 1)[-1].lower() if "." in key else ""
    return _EXTENSIONS.get(suffix) or mimetypes.guess_type(key)[0] or declared or "application/octet-stream"


def _s3() -> Any:
    return aws_client("s3")


def _list(bucket: str, prefix: str) -> list[RemoteItem]:
    """The objects under the prefix; `ItemFailed` when the bucket cannot be listed (gone, not ours to read): the
    sync records it instead of retrying forever."""
    from botocore.exceptions import ClientError

    items: list[RemoteItem] = []
    try:
        for page in _s3().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for obj in page.get("Contents", []):
                if not obj["Key"].endswith("/"):
                    items.append(RemoteItem(obj["Key"], str(obj.get("ETag", "")).strip('"') or None))
            if len(items) >= MAX_ITEMS:
                return items[:MAX_ITEMS]
    except ClientError as exc:
        raise ItemFailed(f"s3://{bucket}/{prefix}: {exc.response.get('Error', {}).get('Code', 'error')}") from None
    return items


def _get(bucket: str, key: str) -> Fetched:
    from botocore.exceptions import ClientError

    try:
        head = _s3().head_object(Bucket=bucket, Key=key)
        if int(head["ContentLength"]) > MAX_UPLOAD_BYTES:
            raise ItemFailed(f"{key} has more than {MAX_UPLOAD_BYTES} bytes")
        got = _s3().get_object(Bucket=bucket, Key=key)
        data = got["Body"].read(MAX_UPLOAD_BYTES + 1)
    except ClientError as exc:
        raise ItemFailed(f"{key}: {exc.response.get('Error', {}).get('Code', 'error')}") from None
    etag = str(got.get("ETag", "")).strip('"') or None
    return Fetched(data, content_type_of(key, str(got.get("ContentType", ""))), key.rsplit("/", 1)[-1], etag)


class S3Connector:
    web = False

    async def list_items(self, source: Source) -> list[RemoteItem]:
        assert source.bucket is not None
        return await asyncio.to_thread(_list, source.bucket, source.prefix)

    async def fetch(self, source: Source, item: RemoteItem, known: Item | None) -> Fetched | None:
        assert source.bucket is not None
        return await asyncio.to_thread(_get, source.bucket, item.key)
