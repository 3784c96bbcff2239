import { describe, expect, it } from "vitest";

import type { Message } from "../api/client";
import { fromNewest, type TranscriptPage, withNewest, withOlder } from "./paging";

function message(n: number): Message {
  return { id: `${n}:0`, role: n % 2 ? "user" : "assistant", text: `message ${n}`, run_id: null, created_at: "" };
}

/** The API's paging: the newest `limit` items before `cursor` (the id of the oldest item the caller has), oldest first. */
function serve(all: Message[], limit: number, cursor?: string | null): TranscriptPage {
  const end = cursor ? all.findIndex((m) => m.id === cursor) : all.length;
  const start = Math.max(0, end - limit);
  const items = all.slice(start, end);
  return { items, next_cursor: start > 0 ? items[0]!.id : null };
}

const ids = (messages: Message[]) => messages.map((m) => m.id);
const chat = (count: number) => Array.from({ length: count }, (_, i) => message(i + 1));

describe("paging through a transcript", () => {
  it("loads the newest page first, then older pages in front, in order, until the chat's start", () => {
    const all = chat(450);
    let loaded = fromNewest(serve(all, 200));
    expect(ids(loaded.messages)).toEqual(ids(all.slice(250)));
    expect(loaded.older).toBe("251:0");

    let fetched = 0;
    while (loaded.older !== null) {
      loaded = withOlder(loaded, serve(all, 200, loaded.older));
      fetched++;
    }
    expect(fetched).toBe(2);
    expect(ids(loaded.messages)).toEqual(ids(all));
  });

  it("has nothing earlier to load when the first page is the whole chat", () => {
    const loaded = fromNewest(serve(chat(3), 200));
    expect(loaded.older).toBeNull();
    expect(loaded.messages).toHaveLength(3);
  });

  it("does not show an item twice when an older page overlaps what is loaded", () => {
    const all = chat(10);
    const loaded = withOlder(fromNewest(serve(all, 4)), { items: all.slice(3, 7), next_cursor: "4:0" });
    expect(ids(loaded.messages)).toEqual(ids(all.slice(3)));
    expect(loaded.older).toBe("4:0");
  });

  it("keeps the older pages loaded when the newest page is fetched again after new messages", () => {
    const all = chat(450);
    const loaded = withOlder(fromNewest(serve(all, 200)), serve(all, 200, "251:0"));
    const later = [...all, message(451), message(452)];
    const reloaded = withNewest(loaded, serve(later, 200));
    expect(ids(reloaded.messages)).toEqual(ids(later.slice(50)));
    expect(reloaded.older).toBe("51:0");
  });

  it("starts again from the newest page when it does not reach back to what is loaded (no gap is shown)", () => {
    const all = chat(250);
    const loaded = withOlder(fromNewest(serve(all, 200)), serve(all, 200, "51:0"));
    const later = [...all, ...Array.from({ length: 300 }, (_, i) => message(251 + i))];
    const reloaded = withNewest(loaded, serve(later, 200));
    expect(ids(reloaded.messages)).toEqual(ids(later.slice(350)));
    expect(reloaded.older).toBe("351:0");
  });
});
