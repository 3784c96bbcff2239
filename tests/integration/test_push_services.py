"""Push endpoints only on a push service (issue 28, item 11): a browser subscription is a URL the server POSTs to,
so it must be a browser vendor's push service (FCM, Mozilla autopush, Apple, Windows push) or a host the operator
added (`PA_PUSH_ALLOW_HOSTS`); anything else is refused when it is saved, and again when a message would be sent."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from personal_agent.push import sender
from personal_agent.push.vapid import Vapid, load_private_key
from personal_agent.settings import get_settings
from tests.auth import auth_headers
from tests.push_browser import BrowserKeys
from tests.receiver import Receiver

URL = "/api/v1/push/subscriptions"


@pytest.mark.parametrize(
    "endpoint",
    [
        "https://fcm.googleapis.com/fcm/send/dQw4w9WgXcQ:APA91b",
        "https://updates.push.services.mozilla.com/wpush/v2/gAAAAABk",
        "https://web.push.apple.com/QGuQyavXutnMPiQ",
        "https://wns2-bl2p.notify.windows.com/w/?token=BQYAAAB",
    ],
)
async def test_a_browser_vendors_push_service_is_accepted(
    http: httpx.AsyncClient, make_tenant: Any, endpoint: str
) -> None:
    created = await http.post(URL, json=BrowserKeys().subscription(endpoint), headers=auth_headers(make_tenant()))
    assert created.status_code == 201, created.text


@pytest.mark.parametrize(
    "endpoint",
    [
        "https://collector.attacker.net/push",
        "https://web.push.apple.com.attacker.net/x",  # a vendor's name as a prefix is not the vendor
        "https://notify.windows.com.evil.org/w",
        "https://169.254.169.254/latest/meta-data/",
        "http://fcm.googleapis.com/fcm/send/x",  # plain http even to a vendor
    ],
)
async def test_any_other_push_endpoint_is_refused_and_nothing_is_stored(
    http: httpx.AsyncClient, make_tenant: Any, endpoint: str
) -> None:
    headers = auth_headers(make_tenant())
    refused = await http.post(URL, json=BrowserKeys().subscription(endpoint), headers=headers)
    assert (refused.status_code, refused.json()["code"]) == (422, "invalid_push_subscription"), refused.text
    assert (await http.get(URL, headers=headers)).json()["items"] == []


async def test_a_push_is_not_sent_to_an_endpoint_off_the_list(
    stack: object, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = get_settings()
    vapid = Vapid(load_private_key(settings.vapid_private_key), settings.vapid_subject)
    subscription = {"endpoint": f"{receiver.url}/device", **BrowserKeys().subscription("x")["keys"]}
    receiver.status = 201
    monkeypatch.setattr(settings, "push_allow_hosts", f"127.0.0.1:{receiver.port}")
    assert (await sender.send(vapid, subscription, {"type": "ping"})).ok  # the operator's test service: sent
    monkeypatch.setattr(settings, "push_allow_hosts", "")  # stored before, no longer on the list: not sent
    refused = await sender.send(vapid, subscription, {"type": "ping"})
    assert not refused.ok and refused.error == "the endpoint must be an https URL"
    assert len(receiver.requests) == 1
