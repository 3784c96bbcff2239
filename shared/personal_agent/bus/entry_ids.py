"""Item ids: where one event sits in a stream whose entries each hold a whole batch of events.

A publisher appends a batch as ONE stream entry (one XADD; its field `d` holds the items in order, one per line:
an item is one line, as an SSE `data:` line is). Readers see items, each with an id of its own:

- the last item of an entry has the entry's id itself, `<ms>-<seq>` (so a one-item entry, e.g. a feed
  announcement, keeps the id it always had, and "after the entry id" means after the whole entry);
- any other item has `<entry id>.<index in entry>`, from 0.

Ids sort as `(ms, seq, index)` with the entry's own id last of its entry (`LAST`), so `Last-Event-ID` names a point
inside an entry and a resume skips exactly what the client already has. A resume point inside an entry always has
at least one item after it in that entry (the last item is never `.<index>`), so reading from it never waits.
"""

from __future__ import annotations

import re

from personal_agent.bus.base import BusEntry

LAST = 2**31  # the index the entry's own id stands for: after every `.<index>` of that entry
SEPARATOR = "\n"
ITEM_ID = re.compile(r"^\d{1,20}-\d{1,20}(\.\d{1,9})?$")


def key(item_id: str) -> tuple[int, int, int]:
    """The sort key of an item id (or of a plain entry id, "0" and "0-0" included)."""
    entry, _, index = item_id.partition(".")
    ms, _, seq = entry.partition("-")
    return int(ms), int(seq or 0), int(index) if index else LAST


def entry_of(item_id: str) -> str:
    """The entry id an item id points into."""
    return item_id.partition(".")[0]


def inside(item_id: str) -> bool:
    """Whether the id names an item before the last of its entry (a resume from it starts inside the entry)."""
    return "." in item_id


def before(entry_id: str) -> str:
    """The greatest entry id below `entry_id` (an XREAD from it returns the entry itself first)."""
    ms, _, seq = entry_id.partition("-")
    return f"{ms}-{int(seq or 0) - 1}" if int(seq or 0) else f"{int(ms) - 1}-{2**64 - 1}"


def check(items: list[str]) -> None:
    """Refuse an item that is not one line (it would split into two items; nor could SSE carry it as one line)."""
    for item in items:
        if SEPARATOR in item or "\r" in item:
            raise ValueError("a bus item must be one line (encode newlines inside it, as JSON does)")


def unpack(entry_id: str, data: str) -> list[BusEntry]:
    """The items of one entry, with their ids."""
    parts = data.split(SEPARATOR)
    last = len(parts) - 1
    return [BusEntry(entry_id if i == last else f"{entry_id}.{i}", part) for i, part in enumerate(parts)]


def items_after(entries: list[tuple[str, str]], after: str, count: int) -> list[BusEntry]:
    """The items of `entries` (entry id, payload) whose ids come after `after`, at most `count` of them."""
    floor = key(after) if after not in ("0", "$") else (0, 0, -1)
    out: list[BusEntry] = []
    for entry_id, data in entries:
        for item in unpack(entry_id, data):
            if key(item.id) > floor:
                out.append(item)
                if len(out) >= count:
                    return out
    return out


def entries(ids: list[str], items: list[str]) -> list[BusEntry]:
    """Items as a reader gets them: each under its id."""
    return [BusEntry(item_id, item) for item_id, item in zip(ids, items, strict=True)]
