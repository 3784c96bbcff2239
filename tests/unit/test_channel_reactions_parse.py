"""Reactions as the channel layer reads them: Slack's `reaction_added`/`reaction_removed` with a thumb (any skin tone)
on a message, Telegram's `message_reaction` with 👍/👎 among the new or old reactions; anything else is no reaction."""

from __future__ import annotations

import json
from uuid import uuid4

from personal_agent.channels import jobs, slack, telegram

ORG = uuid4()


def _slack(kind: str, reaction: str, item_type: str = "message") -> dict[str, object]:
    item = {"type": item_type, "channel": "C1", "ts": "17.5"}
    event = {"type": kind, "user": "U1", "reaction": reaction, "item": item}
    return {"team_id": "T1", "event_id": "Ev1", "event": event}


def test_slack_thumbs_are_ratings_and_their_removal_takes_them_back() -> None:
    up = slack.reaction(ORG, _slack("reaction_added", "+1::skin-tone-4"))
    assert up is not None and (up.rating, up.taken_back, up.message_key, up.sender) == (1, None, "C1:17.5", "U1")
    down = slack.reaction(ORG, _slack("reaction_added", "thumbsdown"))
    assert down is not None and down.rating == -1
    off = slack.reaction(ORG, _slack("reaction_removed", "-1"))
    assert off is not None and (off.rating, off.taken_back) == (None, -1)
    assert slack.reaction(ORG, _slack("reaction_added", "tada")) is None
    assert slack.reaction(ORG, _slack("reaction_added", "+1", "file")) is None
    assert slack.reaction(ORG, {"event": {"type": "app_mention", "user": "U1"}}) is None


def _telegram(old: list[str], new: list[str], user: dict[str, object] | None = None) -> bytes:
    changed = {
        "chat": {"id": 5, "type": "private"},
        "message_id": 101,
        "date": 1,
        "old_reaction": [{"type": "emoji", "emoji": e} for e in old],
        "new_reaction": [{"type": "emoji", "emoji": e} for e in new],
        **({"user": user} if user else {}),
    }
    return json.dumps({"update_id": 9, "message_reaction": changed}).encode()


def test_telegram_message_reactions() -> None:
    person = {"id": 7, "is_bot": False, "first_name": "T"}
    up = telegram.parse_update(ORG, _telegram([], ["\N{THUMBS UP SIGN}"], person))
    assert up is not None and not isinstance(up, telegram.Inbound | telegram.Decision)
    assert (up.rating, up.taken_back, up.message_key, up.sender) == (1, None, "5:101", "7")
    changed = telegram.parse_update(ORG, _telegram(["\N{THUMBS UP SIGN}"], ["\N{THUMBS DOWN SIGN}"], person))
    assert changed is not None and getattr(changed, "rating", None) == -1
    off = telegram.parse_update(ORG, _telegram(["\N{THUMBS DOWN SIGN}"], [], person))
    assert off is not None and (getattr(off, "rating", 0), getattr(off, "taken_back", 0)) == (None, -1)
    assert telegram.parse_update(ORG, _telegram([], ["\N{FIRE}"], person)) is None
    assert telegram.parse_update(ORG, _telegram([], ["\N{THUMBS UP SIGN}"])) is None  # an anonymous group admin


def test_a_reaction_survives_the_hand_over_to_the_channels_worker() -> None:
    item = slack.reaction(ORG, _slack("reaction_added", "+1"))
    assert item is not None and jobs.decode(json.loads(json.dumps(jobs.encode(item)))) == item
