"""What moto's SES has sent to one address: `send_email` keeps `destinations` as a dict of address lists,
`send_raw_email` (the channels' threaded replies, mail with attachments) as a flat list, and both end up in the same
`sent_messages` once any test in the process has sent a raw message."""

from __future__ import annotations

from typing import Any


def recipients(message: Any) -> list[str]:
    destinations = message.destinations
    if isinstance(destinations, dict):
        return [a for key in ("ToAddresses", "CcAddresses", "BccAddresses") for a in destinations.get(key, [])]
    return list(destinations)


def sent_to(address: str) -> list[Any]:
    """The messages moto's SES (the local stack's account, us-east-1) sent to `address`, oldest first."""
    from moto.ses.models import ses_backends

    from personal_agent.local.aws import ACCOUNT_ID

    return [m for m in ses_backends[ACCOUNT_ID]["us-east-1"].sent_messages if address in recipients(m)]
