"""The answer to a CloudFormation custom resource request: a PUT of JSON to the presigned `ResponseURL`.

CloudFormation waits (up to an hour) for this answer; a FAILED answer fails the resource and, on create or
update, rolls the deploy back. The body is limited to 4 KB, so the reason is cut short.
"""

from __future__ import annotations

import json
import re
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Literal

_MAX_REASON = 1000
# A connection string or password that an error message might carry never reaches CloudFormation's events.
_CREDENTIALS = re.compile(r"(postgres(?:ql)?://)[^\s@/]+@|(password[=:]\s*)\S+", re.IGNORECASE)


@dataclass(frozen=True)
class CustomResourceResponse:
    """What a custom resource reports: its status, why, its physical id and data for `!GetAtt`."""

    status: Literal["SUCCESS", "FAILED"]
    physical_resource_id: str
    reason: str = ""
    data: dict[str, str] = field(default_factory=dict)

    def body(self, event: dict[str, Any]) -> dict[str, Any]:
        """The JSON CloudFormation expects, echoing the request's ids."""
        return {
            "Status": self.status,
            "Reason": redact(self.reason)[:_MAX_REASON] or self.status,
            "PhysicalResourceId": self.physical_resource_id,
            "StackId": event["StackId"],
            "RequestId": event["RequestId"],
            "LogicalResourceId": event["LogicalResourceId"],
            "NoEcho": False,
            "Data": self.data,
        }


def redact(text: str) -> str:
    """`text` without credentials in connection strings or `password=` pairs."""
    return _CREDENTIALS.sub(lambda m: (m.group(1) or m.group(2)) + "***" + ("@" if m.group(1) else ""), text)


def send_response(event: dict[str, Any], response: CustomResourceResponse, timeout: float = 30) -> None:
    """PUT the response to the request's presigned URL (signed for an empty content type)."""
    payload = json.dumps(response.body(event)).encode()
    request = urllib.request.Request(
        event["ResponseURL"],
        data=payload,
        method="PUT",
        headers={"Content-Type": "", "Content-Length": str(len(payload))},
    )
    with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310 - the URL is CloudFormation's
        answer.read()
