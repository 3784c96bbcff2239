"""Offboarding's erase on `pa dev` (issue 38): an org admin removes a member, then erases what the member left — their
chats, memories and files (the objects in the bucket, every version) — while another member's stay whole; the
erase is recorded with counts and no content, the usage ledger keeps its rows; an active member is not erased, and
another org's admin cannot even tell the member exists."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.pa_dev import DevServer, running_pa_dev


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev-member-erase")) as server:
        yield server


def _turn(http: httpx.Client, headers: dict[str, str], chat_id: str, message: str) -> str:
    started = http.post(
        f"/api/v1/chats/{chat_id}/runs", headers=headers, json={"message": message, "model": "offline:demo"}
    )
    assert started.status_code == 202, started.text
    with http.stream("GET", started.json()["events_url"], headers=headers) as stream:
        events = [json.loads(line[5:]) for line in stream.iter_lines() if line.startswith("data:")]
    assert events[-1]["type"] == "RUN_FINISHED", events[-1]
    return str(started.json()["run_id"])


def _chat(http: httpx.Client, headers: dict[str, str], title: str) -> str:
    made = http.post("/api/v1/chats", headers=headers, json={"title": title})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def _attach(http: httpx.Client, headers: dict[str, str], chat_id: str, name: str, data: bytes) -> dict[str, Any]:
    """A file attached in the chat, uploaded to the bucket (moto) with its presigned form; its id and form."""
    body = {"filename": name, "content_type": "image/png", "size": len(data)}
    made = http.post(f"/api/v1/chats/{chat_id}/attachments", headers=headers, json=body)
    assert made.status_code == 201, made.text
    form = made.json()["upload"]
    sent = httpx.post(form["url"], data=form["fields"], files={"file": (name, data, "image/png")}, timeout=30)
    assert sent.status_code in (200, 201, 204), sent.text
    return {"id": str(made.json()["id"]), **form}


def _object_versions(upload: dict[str, Any]) -> list[Any]:
    """Every version (and delete marker) of an uploaded file's object, read from the bucket its form posted to."""
    import boto3

    url = httpx.URL(upload["url"])
    s3 = boto3.client(
        "s3",
        endpoint_url=f"{url.scheme}://{url.netloc.decode()}",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    key, bucket = upload["fields"]["key"], url.path.strip("/")
    listed = s3.list_object_versions(Bucket=bucket, Prefix=key)
    return [v for v in [*listed.get("Versions", []), *listed.get("DeleteMarkers", [])] if v["Key"] == key]


def _user_id(http: httpx.Client, headers: dict[str, str]) -> str:
    me = http.get("/api/v1/me", headers=headers)
    assert me.status_code == 200, me.text
    return str(me.json()["user_id"])


def _erase(
    http: httpx.Client, headers: dict[str, str], user_id: str, confirm: str = "erase their data"
) -> httpx.Response:
    return http.post(f"/api/v1/org/members/{user_id}/erase", headers=headers, json={"confirm": confirm})


@pytest.mark.timeout(300)
def test_an_admin_erases_a_removed_members_content_and_only_theirs(dev: DevServer) -> None:
    boss, dan, bea = dev.auth_for("boss", "org-admin"), dev.auth_for("dan"), dev.auth_for("bea")
    rival = dev.auth_for("rex", "org-admin", org="rival")
    with httpx.Client(base_url=dev.url, timeout=60) as http:
        dan_id, bea_id = _user_id(http, dan), _user_id(http, bea)
        dans = _chat(http, dan, "Dan's handover")
        run_id = _turn(http, dan, dans, "Remember: the vault code is 1234")
        photo = _attach(http, dan, dans, "vault.png", b"\x89PNG the vault")
        beas = _chat(http, bea, "Bea's plans")
        _turn(http, bea, beas, "Remember: I take the night train")
        ticket = _attach(http, bea, beas, "ticket.png", b"\x89PNG a ticket")
        assert _object_versions(photo) and _object_versions(ticket)

        active = _erase(http, boss, dan_id)  # not while the member can still work here
        assert (active.status_code, active.json()["code"]) == (409, "member_active"), active.text
        assert http.delete(f"/api/v1/org/members/{dan_id}", headers=boss).status_code == 204

        for outsider in (rival,):  # another org's admin: as if there were no such member
            hidden = _erase(http, outsider, dan_id)
            assert (hidden.status_code, hidden.json()["code"]) == (404, "member_not_found"), hidden.text
        assert _erase(http, bea, dan_id).status_code == 403  # not an admin
        unconfirmed = _erase(http, boss, dan_id, confirm="yes")
        assert unconfirmed.status_code == 422, unconfirmed.text
        assert _object_versions(photo)  # nothing went yet

        erased = _erase(http, boss, dan_id)
        assert erased.status_code == 200, erased.text
        assert {k: erased.json()[k] for k in ("chats", "memories", "files")} == {"chats": 1, "memories": 1, "files": 1}
        assert _object_versions(photo) == []  # the object, every version
        assert _object_versions(ticket)  # bea's file stays
        assert http.get(f"/api/v1/chats/{beas}", headers=bea).status_code == 200
        assert "night train" in http.get("/api/v1/me/memories", headers=bea).text

        trail = http.get("/api/v1/org/erasures", headers=boss)
        assert trail.status_code == 200, trail.text
        (record,) = [e for e in trail.json()["items"] if e["user_id"] == dan_id]
        assert record["erased_by"] == _user_id(http, boss) and record["chats"] == 1
        assert "vault" not in trail.text and "1234" not in trail.text
        assert http.get("/api/v1/org/erasures", headers=rival).json()["items"] == []
        assert http.get("/api/v1/org/erasures", headers=bea).status_code == 403

        # Re-admitted, dan finds nothing of his left, but the usage ledger keeps his run's rows.
        assert http.post(f"/api/v1/org/members/{dan_id}/enable", headers=boss).status_code == 200
        assert http.get("/api/v1/chats", headers=dan).json()["items"] == []
        assert http.get(f"/api/v1/chats/{dans}", headers=dan).status_code == 404
        assert "vault" not in http.get("/api/v1/me/memories", headers=dan).text
        assert http.get(f"/api/v1/attachments/{photo['id']}", headers=dan).status_code == 404
        ledger = http.get("/api/v1/usage/export", headers=dan).text
        assert [r for r in csv.DictReader(io.StringIO(ledger)) if r["run_id"] == run_id]
        assert "vault" not in ledger

        again = _erase(http, boss, bea_id)
        assert (again.status_code, again.json()["code"]) == (409, "member_active")
        own = _erase(http, boss, _user_id(http, boss))
        assert (own.status_code, own.json()["code"]) == (409, "cannot_offboard_self")
