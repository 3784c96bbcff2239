"""Sending one push message to one browser: the payload encrypted to the subscription's keys (RFC 8291,
`aes128gcm`), signed for the push service with the server's VAPID key (RFC 8292), POSTed to the endpoint at its
checked address (the same address checks as every outbound URL, with the operator's push hosts as the allow-list),
and only on a push service (`push_services`). A push service answering 404 or 410 says the subscription is gone."""

from __future__ import annotations

import json
from typing import Any

from personal_agent.outbox.http_post import Sent, post_checked
from personal_agent.push.push_services import operator_hosts, refusal
from personal_agent.push.vapid import Vapid, b64url_decode

TTL_SECONDS = 24 * 3600  # an approval waits a day by default: a phone that was off still hears of it
GONE = (404, 410)


def encrypt(payload: dict[str, Any], p256dh: str, auth: str) -> bytes:
    from personal_agent.push import ece

    body = json.dumps(payload, separators=(",", ":")).encode()
    return ece.encrypt(body, b64url_decode(p256dh), b64url_decode(auth))


async def send(vapid: Vapid, subscription: dict[str, Any], payload: dict[str, Any]) -> Sent:
    endpoint = str(subscription["endpoint"])
    headers = {
        "Authorization": vapid.authorization(endpoint),
        "Content-Encoding": "aes128gcm",
        "Content-Type": "application/octet-stream",
        "TTL": str(TTL_SECONDS),
        "Urgency": "high",
    }
    reason = refusal(endpoint)  # a subscription stored before the push-service list, or since taken off it
    if reason is not None:
        return Sent(False, None, reason)
    body = encrypt(payload, str(subscription["p256dh"]), str(subscription["auth"]))
    return await post_checked(endpoint, body, headers, allow=operator_hosts())
