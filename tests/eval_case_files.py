"""Steps the evaluation-case tests share (over HTTP, as a client would): upload a file to a case through its presigned
POST, wait for an evaluation to end, and list what the documents bucket (moto, under `pa dev`) holds under a prefix."""

from __future__ import annotations

import time
from typing import Any

import httpx


def upload_case_file(
    http: httpx.Client, auth: dict[str, str], dataset_id: str, case_id: str, name: str, content_type: str, data: bytes
) -> dict[str, Any]:
    """Register the file with the case and POST its bytes to the bucket; the registration's answer."""
    body = {"filename": name, "content_type": content_type, "size": len(data)}
    created = http.post(f"/api/v1/evals/datasets/{dataset_id}/cases/{case_id}/files", headers=auth, json=body)
    assert created.status_code == 201, created.text
    form = created.json()["upload"]
    sent = httpx.post(form["url"], data=form["fields"], files={"file": (name, data, content_type)}, timeout=30)
    assert sent.status_code in (200, 201, 204), sent.text
    return dict(created.json())


def wait_eval(
    http: httpx.Client, eval_id: str, auth: dict[str, str] | None = None, seconds: float = 240
) -> dict[str, Any]:
    """The evaluation's report once it has ended (polled, at most `seconds`)."""
    deadline = time.monotonic() + seconds
    while True:
        got = http.get(f"/api/v1/evals/runs/{eval_id}", headers=auth or {})
        assert got.status_code == 200, got.text
        if got.json()["status"] not in ("queued", "running"):
            return dict(got.json())
        assert time.monotonic() < deadline, got.text
        time.sleep(0.2)


def bucket_keys(upload_url: str, prefix: str) -> list[str]:
    """The keys of the objects (current versions) under `prefix` in the bucket an upload form posts to."""
    import boto3

    url = httpx.URL(upload_url)
    s3 = boto3.client(
        "s3",
        endpoint_url=f"{url.scheme}://{url.netloc.decode()}",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    listed = s3.list_objects_v2(Bucket=url.path.strip("/"), Prefix=prefix)
    return [item["Key"] for item in listed.get("Contents", [])]
