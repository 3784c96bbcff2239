"""Share links, temporary chats and the org's data policy (issue 38) on `pa dev` as people use them: alice shares a
chat, bob (same org) sees it, mallory (another org) and an anonymous browser get 404; the snapshot stays as it was
when the chat goes on; restricted chats are refused, confidential ones stay inside the org, public links only once an
admin allows them; revoke works at once; a guessed token is 404. The sweep's and share expiry's clock runs 25 hours
ahead (`PA_RETENTION_CLOCK_SKEW_SECONDS`), so a 1-day link has expired and a 24-hour temporary chat is due, without
waiting; a temporary chat is unlisted, saves no memories, and is deleted with its runs while the usage ledger keeps
their rows."""

from __future__ import annotations

import csv
import io
import json
import time
import zipfile
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.knowledge import make_pdf
from tests.png import tiny_png

SKEW = str(25 * 3600)


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    env = {"PA_RETENTION_CLOCK_SKEW_SECONDS": SKEW, "PA_RETENTION_INTERVAL_SECONDS": "86400"}
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev-sharing"), env_extra=env) as server:
        yield server


@pytest.fixture(scope="module")
def people(dev: DevServer) -> dict[str, dict[str, str]]:
    return {
        "alice": dev.auth,
        "bob": dev.auth_for("bob"),
        "boss": dev.auth_for("boss", "org-admin"),
        "mallory": dev.auth_for("mallory", org="rival"),
    }


def _turn(http: httpx.Client, headers: dict[str, str], chat_id: str, message: str, **extra: Any) -> str:
    """One answered turn; the run's id."""
    body = {"message": message, "model": "offline:demo", **extra}
    started = http.post(f"/api/v1/chats/{chat_id}/runs", headers=headers, json=body)
    assert started.status_code == 202, started.text
    with http.stream("GET", started.json()["events_url"], headers=headers) as stream:
        events = [json.loads(line[5:]) for line in stream.iter_lines() if line.startswith("data:")]
    assert events[-1]["type"] == "RUN_FINISHED", events[-1]
    return str(started.json()["run_id"])


def _chat(http: httpx.Client, headers: dict[str, str], **body: Any) -> str:
    made = http.post("/api/v1/chats", headers=headers, json=body)
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def _share(http: httpx.Client, headers: dict[str, str], chat_id: str, **body: Any) -> httpx.Response:
    return http.post(f"/api/v1/chats/{chat_id}/shares", headers=headers, json=body)


def _attach(http: httpx.Client, headers: dict[str, str], chat_id: str, name: str, data: bytes) -> dict[str, Any]:
    """A file attached in the chat, uploaded to the bucket (moto) with its presigned form; the attachment and form."""
    body = {"filename": name, "content_type": "image/png", "size": len(data)}
    made = http.post(f"/api/v1/chats/{chat_id}/attachments", headers=headers, json=body)
    assert made.status_code == 201, made.text
    form = made.json()["upload"]
    sent = httpx.post(form["url"], data=form["fields"], files={"file": (name, data, "image/png")}, timeout=30)
    assert sent.status_code in (200, 201, 204), sent.text
    return {"id": str(made.json()["id"]), **form}


def _object_versions(upload: dict[str, Any]) -> list[Any]:
    """Every version of an uploaded attachment's object, read from the bucket its form posted to."""
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


def _texts(items: list[dict[str, Any]]) -> list[str]:
    return [str(item.get("text")) for item in items if item["role"] in ("user", "assistant") and item.get("text")]


def _policy(http: httpx.Client, boss: dict[str, str], **values: Any) -> None:
    body = {"allow_public_shares": False, "temporary_hours": 24} | values
    put = http.put("/api/v1/admin/retention", headers=boss, json=body)
    assert put.status_code == 200 and put.json()["temporary_hours"] == body["temporary_hours"], put.text


@pytest.mark.timeout(300)
def test_a_share_is_seen_in_the_org_only_and_stays_as_it_was(dev: DevServer, people: dict[str, Any]) -> None:
    alice, bob, mallory = people["alice"], people["bob"], people["mallory"]
    with httpx.Client(base_url=dev.url, timeout=60) as http:
        chat_id = _chat(http, alice, title="Quarterly plan")
        _turn(http, alice, chat_id, "first question about apples")
        made = _share(http, alice, chat_id)
        assert made.status_code == 201, made.text
        token = made.json()["token"]
        assert made.json()["url"].endswith(f"/s/{token}")

        seen = http.get(f"/api/v1/shares/{token}", headers=bob)
        assert seen.status_code == 200, seen.text
        before = seen.json()
        assert before["title"] == "Quarterly plan" and before["audience"] == "org"
        assert any("apples" in text for text in _texts(before["items"]))

        for outsider in (mallory, {}):  # another org, and a browser with no sign-in: as if there were no link
            refused = http.get(f"/api/v1/shares/{token}", headers=outsider)
            assert (refused.status_code, refused.json()["code"]) == (404, "share_not_found"), refused.text
            assert "apples" not in refused.text

        _turn(http, alice, chat_id, "second question about pears")  # the chat goes on; the snapshot does not
        after = http.get(f"/api/v1/shares/{token}", headers=bob).json()
        assert after["items"] == before["items"] and not any("pears" in t for t in _texts(after["items"]))

        mine = http.get("/api/v1/me/shares", headers=alice).json()["items"]
        assert [s["id"] for s in mine if s["chat_id"] == chat_id] == [made.json()["id"]]
        assert http.get("/api/v1/me/shares", headers=bob).json()["items"] == []


@pytest.mark.timeout(300)
def test_a_share_up_to_a_message_and_continue_into_my_chats(dev: DevServer, people: dict[str, Any]) -> None:
    alice, bob, mallory = people["alice"], people["bob"], people["mallory"]
    with httpx.Client(base_url=dev.url, timeout=60) as http:
        chat_id = _chat(http, alice, title="Recipes")
        _turn(http, alice, chat_id, "tell me about bread")
        upto = http.get(f"/api/v1/chats/{chat_id}/messages", headers=alice).json()["leaf_id"]
        _turn(http, alice, chat_id, "now about cheese")
        token = _share(http, alice, chat_id, upto_message_id=upto).json()["token"]
        texts = _texts(http.get(f"/api/v1/shares/{token}", headers=bob).json()["items"])
        assert any("bread" in t for t in texts) and not any("cheese" in t for t in texts)

        copied = http.post(f"/api/v1/shares/{token}/continue", headers=bob)
        assert copied.status_code == 201, copied.text
        copy_id = copied.json()["id"]
        assert copy_id in [c["id"] for c in http.get("/api/v1/chats", headers=bob).json()["items"]]
        copy_items = http.get(f"/api/v1/chats/{copy_id}/messages", headers=bob).json()["items"]
        assert _texts(copy_items) == texts
        _turn(http, bob, copy_id, "and butter?")  # bob goes on with his copy; alice's chat is untouched
        assert len(_texts(http.get(f"/api/v1/chats/{chat_id}/messages", headers=alice).json()["items"])) == 4
        assert http.get(f"/api/v1/chats/{copy_id}", headers=alice).status_code == 404

        refused = http.post(f"/api/v1/shares/{token}/continue", headers=mallory)
        assert (refused.status_code, refused.json()["code"]) == (404, "share_not_found")
        bad = _share(http, alice, chat_id, upto_message_id=10**12)
        assert (bad.status_code, bad.json()["code"]) == (422, "message_not_found"), bad.text


@pytest.mark.timeout(300)
def test_classification_decides_who_a_chat_may_be_shared_with(dev: DevServer, people: dict[str, Any]) -> None:
    alice, boss, mallory = people["alice"], people["boss"], people["mallory"]
    with httpx.Client(base_url=dev.url, timeout=60) as http:
        restricted = _chat(http, alice, classification="restricted")
        refused = _share(http, alice, restricted)
        assert (refused.status_code, refused.json()["code"]) == (403, "share_restricted"), refused.text
        confidential = _chat(http, alice, classification="confidential")
        assert _share(http, alice, confidential).status_code == 201
        public_conf = _share(http, alice, confidential, audience="public")
        assert (public_conf.status_code, public_conf.json()["code"]) == (403, "share_public_confidential")
        standard = _chat(http, alice, title="Open notes")
        _turn(http, alice, standard, "public facts about rivers")
        not_allowed = _share(http, alice, standard, audience="public")
        assert (not_allowed.status_code, not_allowed.json()["code"]) == (403, "share_public_not_allowed")
        assert http.put("/api/v1/admin/retention", headers=alice, json={}).status_code == 403

        _policy(http, boss, allow_public_shares=True)
        try:
            public = _share(http, alice, standard, audience="public")
            assert public.status_code == 201, public.text
            for anyone in ({}, mallory):
                seen = http.get(f"/api/v1/shares/{public.json()['token']}", headers=anyone)
                assert seen.status_code == 200 and any("rivers" in t for t in _texts(seen.json()["items"]))
            still = _share(http, alice, confidential, audience="public")
            assert (still.status_code, still.json()["code"]) == (403, "share_public_confidential")
        finally:
            _policy(http, boss, allow_public_shares=False)


@pytest.mark.timeout(300)
def test_revoked_expired_guessed_and_foreign_links_are_404(dev: DevServer, people: dict[str, Any]) -> None:
    alice, bob, mallory = people["alice"], people["bob"], people["mallory"]
    with httpx.Client(base_url=dev.url, timeout=60) as http:
        chat_id = _chat(http, alice)
        _turn(http, alice, chat_id, "secret plans")
        made = _share(http, alice, chat_id).json()
        for stranger in (bob, mallory):  # only its maker revokes a link
            denied = http.delete(f"/api/v1/shares/{made['id']}", headers=stranger)
            assert (denied.status_code, denied.json()["code"]) == (404, "share_not_found")
        assert http.get(f"/api/v1/shares/{made['token']}", headers=bob).status_code == 200
        assert http.delete(f"/api/v1/shares/{made['id']}", headers=alice).status_code == 204
        gone = http.get(f"/api/v1/shares/{made['token']}", headers=bob)
        assert (gone.status_code, gone.json()["code"]) == (404, "share_not_found")
        assert http.get(f"/api/v1/shares/{made['token']}", headers=alice).status_code == 404
        listed = http.get("/api/v1/me/shares", headers=alice).json()["items"]
        assert [s["revoked_at"] is not None for s in listed if s["id"] == made["id"]] == [True]

        # The clock runs 25 hours ahead: a 1-day link has expired, a 2-day one has not.
        day = _share(http, alice, chat_id, expires_in_days=1).json()["token"]
        two = _share(http, alice, chat_id, expires_in_days=2).json()["token"]
        assert http.get(f"/api/v1/shares/{day}", headers=bob).status_code == 404
        assert http.get(f"/api/v1/shares/{two}", headers=bob).status_code == 200

        for guess in (made["token"][:-1] + "A", "x" * 43, "../../api/v1/chats", "%00"):
            assert http.get(f"/api/v1/shares/{guess}", headers=bob).status_code == 404
        for bad in ({"audience": "everyone"}, {"expires_in_days": 0}):
            invalid = _share(http, alice, chat_id, **bad)
            assert invalid.status_code == 422, invalid.text
        assert _share(http, mallory, chat_id).status_code == 404  # another org's chat, as if there were none


@pytest.mark.timeout(300)
def test_a_temporary_chat_is_unlisted_then_deleted_and_the_ledger_stays(dev: DevServer, people: dict[str, Any]) -> None:
    alice, boss = people["alice"], people["boss"]
    with httpx.Client(base_url=dev.url, timeout=60) as http:
        kept = _chat(http, alice, title="Keep me")
        temporary = _chat(http, alice, title="Off the record", temporary=True)
        run_id = _turn(http, alice, temporary, "Remember: a private question about green tea")
        _turn(http, alice, kept, "Remember: I cycle to work")  # a normal chat saves it (the demo model's tool call)
        memories = http.get("/api/v1/me/memories", headers=alice).text
        assert "cycle to work" in memories and "green tea" not in memories  # a temporary chat saves none
        listed = [c["id"] for c in http.get("/api/v1/chats", headers=alice).json()["items"]]
        assert kept in listed and temporary not in listed
        opened = http.get(f"/api/v1/chats/{temporary}", headers=alice)
        assert opened.status_code == 200 and opened.json()["temporary_until"], opened.text  # the web chat lists it not
        assert http.get(f"/api/v1/chats/{kept}", headers=alice).json()["temporary_until"] is None

        _policy(http, boss, temporary_hours=48)  # a temporary chat made now lives 48 hours: not due at +25 h
        try:
            longer = _chat(http, alice, temporary=True)
        finally:
            _policy(http, boss, temporary_hours=24)
        swept = http.post("/api/v1/admin/retention/run", headers=boss)
        assert swept.status_code == 200, swept.text
        assert {k: swept.json()[k] for k in ("temporary_chats", "expired_chats")} == {
            "temporary_chats": 1,
            "expired_chats": 0,
        }

        assert http.get(f"/api/v1/chats/{temporary}", headers=alice).status_code == 404
        assert http.get(f"/api/v1/chats/{temporary}/messages", headers=alice).status_code == 404
        assert http.get(f"/api/v1/runs/{run_id}", headers=alice).status_code == 404
        assert http.get(f"/api/v1/chats/{longer}", headers=alice).status_code == 200
        assert http.get(f"/api/v1/chats/{kept}", headers=alice).status_code == 200
        ledger = http.get("/api/v1/usage/export", headers=alice).text
        assert [r for r in csv.DictReader(io.StringIO(ledger)) if r["run_id"] == run_id]  # its usage rows stay
        assert "green tea" not in ledger
        assert http.post("/api/v1/admin/retention/run", headers=alice).status_code == 403


@pytest.mark.timeout(300)
def test_retention_by_classification_deletes_exactly_the_expired_chats(dev: DevServer, people: dict[str, Any]) -> None:
    """The clock runs 25 hours ahead: with confidential chats kept 1 day, every confidential chat (and its shares)
    is past it, standard ones (kept forever) stay; the ledger keeps the deleted runs' rows."""
    alice, bob, boss = people["alice"], people["bob"], people["boss"]
    with httpx.Client(base_url=dev.url, timeout=60) as http:
        confidential = _chat(http, alice, title="Board minutes", classification="confidential")
        run_id = _turn(http, alice, confidential, "confidential figures")
        photo = _attach(http, alice, confidential, "whiteboard.png", b"\x89PNG whiteboard")
        assert _object_versions(photo)
        token = _share(http, alice, confidential).json()["token"]
        standard = _chat(http, alice, title="Lunch ideas")
        before = {
            c["id"]: c["classification"] for c in http.get("/api/v1/chats?limit=100", headers=alice).json()["items"]
        }
        doomed = sum(1 for c in before.values() if c == "confidential")
        _policy(http, boss, confidential_days=1, restricted_days=30)
        try:
            swept = http.post("/api/v1/admin/retention/run", headers=boss)
        finally:
            _policy(http, boss)
        assert swept.status_code == 200, swept.text
        counts = {k: swept.json()[k] for k in ("temporary_chats", "expired_chats")}
        assert counts == {"temporary_chats": 0, "expired_chats": doomed}, swept.text
        after = {c["id"] for c in http.get("/api/v1/chats?limit=100", headers=alice).json()["items"]}
        assert after == {cid for cid, c in before.items() if c != "confidential"}
        assert confidential not in after and standard in after
        assert http.get(f"/api/v1/shares/{token}", headers=bob).status_code == 404  # its share went with it
        assert swept.json()["expired_attachments"] >= 1, swept.text
        assert _object_versions(photo) == []  # its file is gone from the bucket, every version
        assert http.get(f"/api/v1/attachments/{photo['id']}", headers=alice).status_code == 404
        ledger = http.get("/api/v1/usage/export", headers=alice).text
        assert [r for r in csv.DictReader(io.StringIO(ledger)) if r["run_id"] == run_id]


@pytest.mark.timeout(300)
def test_every_share_is_audited_without_content(dev: DevServer, people: dict[str, Any]) -> None:
    alice, bob, boss, mallory = people["alice"], people["bob"], people["boss"], people["mallory"]
    with httpx.Client(base_url=dev.url, timeout=60) as http:
        chat_id = _chat(http, alice, title="Audited")
        _turn(http, alice, chat_id, "audit me please")
        made = _share(http, alice, chat_id).json()
        assert http.get(f"/api/v1/shares/{made['token']}", headers=bob).status_code == 200
        assert http.get(f"/api/v1/shares/{made['token']}", headers=mallory).status_code == 404
        assert http.post(f"/api/v1/shares/{made['token']}/continue", headers=bob).status_code == 201
        assert http.delete(f"/api/v1/shares/{made['id']}", headers=alice).status_code == 204
        trail = http.get("/api/v1/admin/share-audit", headers=boss)
        assert trail.status_code == 200, trail.text
        mine = [e for e in trail.json()["items"] if e["share_id"] == made["id"]]
        assert [e["action"] for e in reversed(mine)] == ["created", "viewed", "continued", "revoked"]
        assert "audit me" not in trail.text and made["token"] not in trail.text
        assert http.get("/api/v1/admin/share-audit", headers=alice).status_code == 403
        rival_admin = dev.auth_for("rex", "org-admin", org="rival")
        assert http.get("/api/v1/admin/share-audit", headers=rival_admin).json()["items"] == []  # no other org's


def _export(http: httpx.Client, headers: dict[str, str]) -> tuple[str, bytes]:
    """`POST /me/export` (202), its `Location` polled until ready, the ZIP from the presigned URL (no token)."""
    started = http.post("/api/v1/me/export", headers=headers)
    assert started.status_code == 202, started.text
    location = started.headers["location"]
    deadline = time.monotonic() + 60
    while (status := http.get(location, headers=headers).json())["status"] in ("pending", "running"):
        assert time.monotonic() < deadline, status
        time.sleep(0.1)
    assert status["status"] == "ready", status
    got = httpx.get(status["download_url"], timeout=60)
    assert got.status_code == 200 and got.headers["content-type"] == "application/zip", got.text
    assert "attachment" in got.headers["content-disposition"]
    return location, got.content


@pytest.mark.timeout(300)
def test_export_my_data_then_erase_it(dev: DevServer, people: dict[str, Any]) -> None:
    erin, bob = dev.auth_for("erin"), people["bob"]
    with httpx.Client(base_url=dev.url, timeout=60) as http:
        chat_id = _chat(http, erin, title="Erin's trip")
        _turn(http, erin, chat_id, "first about Lisbon")
        first_user = http.get(f"/api/v1/chats/{chat_id}/messages", headers=erin).json()["items"][0]["message_id"]
        _turn(http, erin, chat_id, "then about Porto")
        _turn(http, erin, chat_id, "instead about Faro", parent_message_id=None)  # a second branch from the start
        _turn(http, erin, chat_id, "Remember: I prefer trains")
        token = _share(http, erin, chat_id).json()["token"]
        ticket = _attach(http, erin, chat_id, "ticket.png", b"\x89PNG a train ticket")
        agent = {"name": "Trip planner", "slug": "erins-trips", "instructions": "Plan trips by train."}
        assert http.post("/api/v1/agents", headers=erin, json=agent).status_code == 201

        location, exported = _export(http, erin)
        archive = zipfile.ZipFile(io.BytesIO(exported))
        manifest = json.loads(archive.read("manifest.json"))
        assert manifest["format"] == "personal-agent-export" and manifest["complete"] is True
        stored = json.loads(archive.read(f"chats/{chat_id}.json"))
        said = json.dumps(stored["messages"])
        assert all(w in said for w in ("Lisbon", "Porto", "Faro", "trains"))  # every branch
        roots = [m for m in stored["messages"] if m["parent_id"] is None]
        assert len(roots) == 2 and first_user in [m["id"] for m in roots]
        md = archive.read(f"chats/{chat_id}.md").decode()
        assert "Faro" in md and "trains" in md and "Porto" not in md  # the latest branch as text
        assert "I prefer trains" in archive.read("memories.json").decode()
        assert json.loads(archive.read("shares.json"))[0]["chat_id"] == chat_id
        assert token not in exported.decode("latin-1")
        assert archive.read(f"attachments/{ticket['id']}/ticket.png") == b"\x89PNG a train ticket"
        planner = json.loads(archive.read("agents/erins-trips.json"))
        assert planner["versions"][0]["config"]["instructions"] == "Plan trips by train."
        _, others = _export(http, bob)
        theirs = zipfile.ZipFile(io.BytesIO(others)).namelist()
        assert f"chats/{chat_id}.json" not in theirs
        assert f"attachments/{ticket['id']}/ticket.png" not in theirs and "agents/erins-trips.json" not in theirs
        assert http.get(location, headers=bob).status_code == 404  # erin's export is not bob's to read

        assert _object_versions(ticket)
        refused = http.post("/api/v1/me/erase", headers=erin, json={"confirm": "yes"})
        assert refused.status_code == 422 and http.get(f"/api/v1/chats/{chat_id}", headers=erin).status_code == 200
        erased = http.post("/api/v1/me/erase", headers=erin, json={"confirm": "erase my data"})
        counts = {"chats": 1, "memories": 1, "files": 1, "exports": 1}  # the export made above goes with the rest
        assert erased.status_code == 200 and erased.json() == counts, erased.text
        assert http.get(location, headers=erin).status_code == 404
        assert _object_versions(ticket) == []  # the attachment's object, every version
        assert http.get(f"/api/v1/chats/{chat_id}", headers=erin).status_code == 404
        assert http.get(f"/api/v1/shares/{token}", headers=bob).status_code == 404
        assert "trains" not in http.get("/api/v1/me/memories", headers=erin).text
        assert http.get("/api/v1/usage/export", headers=erin).text.count("offline") >= 4  # the ledger stays


@pytest.mark.timeout(300)
def test_an_org_admin_exports_the_org_and_the_sweep_expires_it(dev: DevServer, people: dict[str, Any]) -> None:
    boss, bob, mallory = people["boss"], people["bob"], people["mallory"]
    with httpx.Client(base_url=dev.url, timeout=60) as http:
        chat_id = _chat(http, bob, title="Bob's notes")
        _turn(http, bob, chat_id, "a note about Madeira")
        rival_chat = _chat(http, mallory, title="Rival's plan")

        assert http.post("/api/v1/admin/export", headers=bob).status_code == 403
        started = http.post("/api/v1/admin/export", headers=boss)
        assert started.status_code == 202, started.text
        location = started.headers["location"]
        assert location.startswith("/api/v1/admin/exports/")
        deadline = time.monotonic() + 60
        while (status := http.get(location, headers=boss).json())["status"] in ("pending", "running"):
            assert time.monotonic() < deadline, status
            time.sleep(0.1)
        assert status["status"] == "ready" and status["scope"] == "org", status
        archive = zipfile.ZipFile(io.BytesIO(httpx.get(status["download_url"], timeout=60).content))
        names = archive.namelist()
        assert f"chats/{chat_id}.json" in names and f"chats/{rival_chat}.json" not in names
        assert "Madeira" in archive.read(f"chats/{chat_id}.md").decode()
        assert http.get(location, headers=dev.auth_for("rex", "org-admin", org="rival")).status_code == 404

        # The sweep's clock runs 25 hours ahead here: the export is past its day, and goes with its object.
        swept = http.post("/api/v1/admin/retention/run", headers=boss)
        assert swept.status_code == 200 and swept.json()["expired_exports"] >= 1, swept.text
        assert http.get(location, headers=boss).status_code == 404
        gone = httpx.get(
            status["download_url"], timeout=60
        )  # the object is gone too (S3 may say 403 for a missing key)
        assert gone.status_code in (403, 404) and not gone.content.startswith(b"PK"), gone.status_code


@pytest.mark.timeout(300)
def test_tool_arguments_are_hidden_unless_the_sharer_shows_them(dev: DevServer, people: dict[str, Any]) -> None:
    alice, bob = people["alice"], people["bob"]
    with httpx.Client(base_url=dev.url, timeout=60) as http:
        chat_id = _chat(http, alice, title="Tools")
        _turn(http, alice, chat_id, "Remember: my locker code is 4711")  # the demo model calls `remember`

        def calls(**body: Any) -> list[dict[str, Any]]:
            token = _share(http, alice, chat_id, **body).json()["token"]
            items = http.get(f"/api/v1/shares/{token}", headers=bob).json()["items"]
            return [call for item in items for call in item.get("tool_calls") or []]

        hidden = calls()
        assert [c["name"] for c in hidden] == ["remember"] and hidden[0]["args"] is None
        shown = calls(show_tools=True)
        assert "4711" in json.dumps(shown[0]["args"])


def _chatgpt_export() -> list[dict[str, Any]]:
    """ChatGPT's published `conversations.json` shape: a tree of nodes (`mapping`) with `parent` and `children`; here
    a system root, a question, two edited versions of a follow-up (a branch) and their answers."""

    def node(key: str, parent: str | None, children: list[str], role: str | None, text: str = "") -> dict[str, Any]:
        message = None
        if role is not None:
            message = {"id": key, "author": {"role": role}, "content": {"content_type": "text", "parts": [text]}}
        return {"id": key, "parent": parent, "children": children, "message": message}

    mapping = {
        "root": node("root", None, ["sys"], None),
        "sys": node("sys", "root", ["q1"], "system"),
        "q1": node("q1", "sys", ["a1"], "user", "How do tides work?"),
        "a1": node("a1", "q1", ["q2", "q2b"], "assistant", "The moon's gravity pulls the oceans."),
        "q2": node("q2", "a1", ["a2"], "user", "And the sun?"),
        "a2": node("a2", "q2", [], "assistant", "It adds spring and neap tides."),
        "q2b": node("q2b", "a1", ["a2b"], "user", "And in lakes?"),
        "a2b": node("a2b", "q2b", [], "assistant", "Lake tides are tiny."),
    }
    return [{"title": "Tides", "create_time": 1700000000.0, "mapping": mapping, "current_node": "a2b"}]


def _claude_export() -> list[dict[str, Any]]:
    """Claude's published `conversations.json` shape: `chat_messages` with `sender` human/assistant."""
    messages = [
        {"uuid": "m1", "sender": "human", "text": "Name a prime.", "created_at": "2024-01-01T00:00:00Z"},
        {"uuid": "m2", "sender": "assistant", "text": "Seven.", "created_at": "2024-01-01T00:00:01Z"},
    ]
    return [{"uuid": "c1", "name": "Primes", "created_at": "2024-01-01T00:00:00Z", "chat_messages": messages}]


@pytest.mark.timeout(300)
def test_import_chatgpt_and_claude_exports(dev: DevServer) -> None:
    fay = dev.auth_for("fay")
    with httpx.Client(base_url=dev.url, timeout=60) as http:
        made = http.post("/api/v1/me/import?format=chatgpt", headers=fay, json=_chatgpt_export())
        assert made.status_code == 201, made.text
        (tides,) = made.json()["chat_ids"]
        latest = http.get(f"/api/v1/chats/{tides}/messages", headers=fay).json()
        assert _texts(latest["items"]) == [
            "How do tides work?",
            "The moon's gravity pulls the oceans.",
            "And in lakes?",
            "Lake tides are tiny.",
        ]
        asked = [i for i in latest["items"] if i.get("text") == "And in lakes?"][0]
        assert len(asked["sibling_ids"]) == 2  # the edited follow-up is a branch, as in ChatGPT
        other = http.get(f"/api/v1/chats/{tides}/messages?leaf={asked['sibling_ids'][0]}", headers=fay).json()
        assert _texts(other["items"])[2:] == ["And the sun?", "It adds spring and neap tides."]
        _turn(http, fay, tides, "and tomorrow?")  # the imported chat goes on

        claude = http.post("/api/v1/me/import?format=claude", headers=fay, json=_claude_export())
        assert claude.status_code == 201, claude.text
        (primes,) = claude.json()["chat_ids"]
        assert http.get(f"/api/v1/chats/{primes}", headers=fay).json()["title"] == "Primes"
        assert _texts(http.get(f"/api/v1/chats/{primes}/messages", headers=fay).json()["items"]) == [
            "Name a prime.",
            "Seven.",
        ]

        for fmt, body in (("chatgpt", {"not": "a list"}), ("chatgpt", [{"title": "x"}]), ("claude", [{"name": 1}])):
            bad = http.post(f"/api/v1/me/import?format={fmt}", headers=fay, json=body)
            assert (bad.status_code, bad.json()["code"]) == (422, "import_invalid"), bad.text
        garbled = http.post("/api/v1/me/import?format=claude", headers=fay, content=b"{not json")
        assert (garbled.status_code, garbled.json()["code"]) == (422, "import_invalid")
        assert http.post("/api/v1/me/import?format=word", headers=fay, json=[]).status_code == 422


HANDBOOK = "Offsite handbook: the boat to the island leaves from pier 9 at seven sharp."


def _ready_document(http: httpx.Client, headers: dict[str, str], name: str, data: bytes) -> str:
    """A knowledge document of the caller's, uploaded and polled (with a bound) until indexed; its id."""
    body = {"filename": name, "content_type": "application/pdf", "size": len(data)}
    made = http.post("/api/v1/knowledge/documents", headers=headers, json=body)
    assert made.status_code == 201, made.text
    form, document_id = made.json()["upload"], made.json()["document"]["id"]
    sent = httpx.post(form["url"], data=form["fields"], files={"file": (name, data)}, timeout=30)
    assert sent.status_code in (200, 201, 204), sent.text
    deadline, url = time.monotonic() + 120, f"/api/v1/knowledge/documents/{document_id}"
    while (status := http.get(url, headers=headers).json()["status"]) != "ready":
        assert status != "failed" and time.monotonic() < deadline, status
        time.sleep(0.2)
    return str(document_id)


@pytest.mark.timeout(300)
def test_a_share_shows_its_citations_and_opens_its_files(dev: DevServer, people: dict[str, Any]) -> None:
    alice, bob, mallory = people["alice"], people["bob"], people["mallory"]
    with httpx.Client(base_url=dev.url, timeout=60) as http:
        _ready_document(http, alice, "handbook.pdf", make_pdf([HANDBOOK]))
        chat_id = _chat(http, alice, title="Offsite")
        photo = _attach(http, alice, chat_id, "island.png", tiny_png(4, 3))
        _turn(http, alice, chat_id, "a picture of the island", attachments=[photo["id"]])
        _turn(http, alice, chat_id, '/tool search_knowledge {"query": "when does the boat leave"}')
        unsent = _attach(http, alice, chat_id, "unsent.png", tiny_png(2, 2))  # never sent: not in the snapshot
        made = _share(http, alice, chat_id).json()
        token = made["token"]

        # Bob sees the answer's sources as the chat numbers them, with the passage, not the raw tool result.
        items = http.get(f"/api/v1/shares/{token}", headers=bob).json()["items"]
        (answer,) = [item for item in items if item.get("citations")]
        first = answer["citations"][0]
        assert (first["number"], first["label"], first["document"]) == (1, "handbook.pdf, p. 1", "handbook.pdf")
        assert "pier 9" in first["text"]
        files = [f for item in items for f in item.get("attachments") or []]
        assert [(f["id"], f["name"]) for f in files] == [(photo["id"], "island.png")]

        # ... and opens the snapshot's picture through the link; not a file the snapshot does not show.
        path = f"/api/v1/shares/{token}/attachments/{photo['id']}/download"
        for outsider in (mallory, {}):  # another org, no sign-in: the link does not exist for them
            refused = http.get(path, headers=outsider)
            assert (refused.status_code, refused.json()["code"]) == (404, "share_not_found"), refused.text
        link = http.get(path, headers=bob)
        assert link.status_code == 200 and link.json()["disposition"] == "inline", link.text
        assert httpx.get(link.json()["url"], timeout=30).content == tiny_png(4, 3)
        hidden = http.get(f"/api/v1/shares/{token}/attachments/{unsent['id']}/download", headers=bob)
        assert (hidden.status_code, hidden.json()["code"]) == (404, "attachment_not_found")
        assert http.delete(f"/api/v1/shares/{made['id']}", headers=alice).status_code == 204
        revoked = http.get(path, headers=bob)
        assert (revoked.status_code, revoked.json()["code"]) == (404, "share_not_found")


@pytest.mark.timeout(300)
def test_pa_devs_retention_loop_deletes_a_due_temporary_chat_on_its_own(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """`pa dev` sweeps every `PA_RETENTION_INTERVAL_SECONDS` (here 1 s, the clock 25 hours ahead): a temporary chat
    past its 24 hours goes without anyone calling `POST /admin/retention/run`; a kept chat stays."""
    env = {"PA_RETENTION_CLOCK_SKEW_SECONDS": SKEW, "PA_RETENTION_INTERVAL_SECONDS": "1"}
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev-retention-loop"), env_extra=env) as server:
        alice = server.auth
        with httpx.Client(base_url=server.url, timeout=60) as http:
            kept = _chat(http, alice, title="Keep me")
            temporary = _chat(http, alice, title="Off the record", temporary=True)
            deadline = time.monotonic() + 60
            while (opened := http.get(f"/api/v1/chats/{temporary}", headers=alice)).status_code == 200:
                assert time.monotonic() < deadline, "the loop did not delete the temporary chat within 60 s"
                time.sleep(0.2)
            assert (opened.status_code, opened.json()["code"]) == (404, "chat_not_found")
            assert http.get(f"/api/v1/chats/{kept}", headers=alice).status_code == 200
