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
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.pa_dev import DevServer, running_pa_dev

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


def _turn(http: httpx.Client, headers: dict[str, str], chat_id: str, message: str) -> str:
    """One answered turn; the run's id."""
    started = http.post(
        f"/api/v1/chats/{chat_id}/runs", headers=headers, json={"message": message, "model": "offline:demo"}
    )
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
        assert http.get(f"/api/v1/chats/{temporary}", headers=alice).status_code == 200

        _policy(http, boss, temporary_hours=48)  # a temporary chat made now lives 48 hours: not due at +25 h
        try:
            longer = _chat(http, alice, temporary=True)
        finally:
            _policy(http, boss, temporary_hours=24)
        swept = http.post("/api/v1/admin/retention/run", headers=boss)
        assert swept.status_code == 200 and swept.json() == {"temporary_chats": 1, "expired_chats": 0}, swept.text

        assert http.get(f"/api/v1/chats/{temporary}", headers=alice).status_code == 404
        assert http.get(f"/api/v1/chats/{temporary}/messages", headers=alice).status_code == 404
        assert http.get(f"/api/v1/runs/{run_id}", headers=alice).status_code == 404
        assert http.get(f"/api/v1/chats/{longer}", headers=alice).status_code == 200
        assert http.get(f"/api/v1/chats/{kept}", headers=alice).status_code == 200
        ledger = http.get("/api/v1/usage/export", headers=alice).text
        assert [r for r in csv.DictReader(io.StringIO(ledger)) if r["run_id"] == run_id]  # its usage rows stay
        assert "green tea" not in ledger
        assert http.post("/api/v1/admin/retention/run", headers=alice).status_code == 403
