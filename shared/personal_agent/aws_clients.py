"""The one place boto3 clients are made: one per service, endpoint, region and options per process, kept.

boto3 is imported with the first client, so the API function's cold start does not pay for it. A client is
thread-safe once made; making one is not (boto3's default session), so they are made under a lock.
"""

from __future__ import annotations

import functools
import json
import threading
from typing import Any

_making = threading.Lock()


def aws_client(service: str, **options: Any) -> Any:
    """A client of `service` at the settings' AWS endpoint and region; `options` are botocore `Config` options."""
    from personal_agent.settings import get_settings

    settings = get_settings()
    return aws_client_at(service, settings.aws_endpoint_url, settings.aws_region, **options)


def aws_client_at(service: str, endpoint_url: str | None, region: str | None, **options: Any) -> Any:
    """A client of `service` at this endpoint and region (None: what the environment says, as boto3 reads it)."""
    return _client(service, endpoint_url, region, json.dumps(options, sort_keys=True))


@functools.cache
def _client(service: str, endpoint_url: str | None, region: str | None, options: str) -> Any:
    import boto3
    from botocore.config import Config

    config = Config(**json.loads(options)) if options != "{}" else None
    make: Any = boto3.client  # typed per service name (boto3-stubs); the service here is any name
    with _making:
        return make(service, endpoint_url=endpoint_url, region_name=region, config=config)
