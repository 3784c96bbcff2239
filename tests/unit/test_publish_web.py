"""`make deploy` uploads the web chat so a new deploy shows at once and hashed assets are cached for good."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from infra.publish_web import upload


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    import boto3
    from moto import mock_aws

    for var, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}.items():
        monkeypatch.setenv(var, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket="web")
        yield client


def test_upload_sets_types_and_caching_and_puts_index_last(tmp_path: Path, s3: Any) -> None:
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "index-3f2a1b.js").write_text("console.log(1)")
    (tmp_path / "assets" / "index-9c8d7e.css").write_text("body{}")
    (tmp_path / "favicon.svg").write_text("<svg/>")
    (tmp_path / "index.html").write_text("<!doctype html>")
    keys = upload(tmp_path, "web", s3)
    assert keys[-1] == "index.html" and len(keys) == 4
    heads = {key: s3.head_object(Bucket="web", Key=key) for key in keys}
    assert heads["index.html"]["CacheControl"] == "no-cache"
    assert heads["index.html"]["ContentType"] == "text/html"
    assert heads["assets/index-3f2a1b.js"]["ContentType"] == "text/javascript"
    assert heads["assets/index-3f2a1b.js"]["CacheControl"] == "public, max-age=31536000, immutable"
    assert heads["assets/index-9c8d7e.css"]["ContentType"] == "text/css"
    assert heads["favicon.svg"]["ContentType"] == "image/svg+xml"
