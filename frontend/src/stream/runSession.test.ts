import { describe, expect, it } from "vitest";

import { followRun, loadRun, saveRun } from "./runSession";
import { assistantText, newRunView, type RunView } from "./runView";
import { FakeRelay, MemoryStore, noSleep, scriptedRun } from "./testing";

function view(): RunView {
  return newRunView({ runId: "r1", chatId: "c1", eventsUrl: "/api/v1/runs/r1/events", mode: "inline", userText: "hi" });
}

async function followUntil(relay: FakeRelay, store: MemoryStore, start: RunView, stopAfter: number | null) {
  let count = 0;
  const following = followRun(start, {
    getToken: () => "tok",
    store,
    fetch: relay.fetch,
    sleep: noSleep,
    onEvent: () => {
      if (stopAfter !== null && ++count === stopAfter) following.stop(); // the page goes away
    },
  });
  await following.done;
  return start;
}

describe("resuming a run after a reload", () => {
  it("restores what was shown and continues after the last applied id, with no repeated text", async () => {
    const relay = new FakeRelay(scriptedRun());
    const store = new MemoryStore();
    // The first page load sees 5 events: "Hel" "lo" ", " of the first message.
    const before = await followUntil(relay, store, view(), 5);
    expect(assistantText(before)).toBe("Hello, ");

    // Reload: a new page reads the saved view (and the id with it) and follows from there.
    const restored = loadRun(store, "c1");
    expect(restored).not.toBeNull();
    expect(assistantText(restored!)).toBe("Hello, ");
    const after = await followUntil(relay, store, restored!, null);

    expect(relay.requests.map((r) => r.lastEventId)).toEqual([null, relay.events[4]!.id]);
    expect(assistantText(after)).toBe("Hello, world!\n\nIt is noon.");
    expect(after.phase).toBe("finished");
    const tool = after.items.find((i) => i.kind === "tool");
    expect(tool).toMatchObject({ name: "get_time", args: '{"tz":"UTC"}', result: "12:00", done: true });
    expect(after.userText).toBe("hi");
  });

  it("is exact wherever the reload happens, even when the relay replays from the start", async () => {
    const events = scriptedRun();
    for (let cut = 1; cut < events.length; cut++) {
      for (const ignoreLastEventId of [false, true]) {
        const relay = new FakeRelay(events, { ignoreLastEventId, chunkSize: 11 });
        const store = new MemoryStore();
        await followUntil(relay, store, view(), cut);
        const after = await followUntil(relay, store, loadRun(store, "c1")!, null);
        expect(assistantText(after)).toBe("Hello, world!\n\nIt is noon.");
        expect(after.items.filter((i) => i.kind === "tool")).toHaveLength(1);
      }
    }
  });

  it("survives several reloads in a row and relay lifetimes in between", async () => {
    const relay = new FakeRelay(scriptedRun(), { perConnection: 3 });
    const store = new MemoryStore();
    let current = view();
    for (let i = 0; i < 4; i++) {
      await followUntil(relay, store, current, 2);
      current = loadRun(store, "c1")!;
    }
    const after = await followUntil(relay, store, current, null);
    expect(assistantText(after)).toBe("Hello, world!\n\nIt is noon.");
  });

  it("shows approvals, errors and cancellation from custom events", async () => {
    const events = [
      { id: "1-0", data: { type: "RUN_STARTED" } },
      {
        id: "2-0",
        data: { type: "CUSTOM", name: "approval_requested", value: { approval_id: "a1", run_id: "r1", tool: "send_email", tool_call_id: "t1", args: { to: "x" }, expires_at: "2030-01-01T00:00:00Z" } },
      },
      { id: "2-0", data: { type: "CUSTOM", name: "approval_requested", value: { approval_id: "a1", run_id: "r1", tool: "send_email", tool_call_id: "t1", args: {}, expires_at: "2030-01-01T00:00:00Z" } } },
      { id: "4-0", data: { type: "RUN_ERROR", message: "budget exceeded", code: "budget_exceeded" } },
    ];
    const relay = new FakeRelay(events);
    const after = await followUntil(relay, new MemoryStore(), view(), null);
    expect(after.items).toEqual([
      { kind: "approval", id: "a1", tool: "send_email", args: { to: "x" }, expiresAt: "2030-01-01T00:00:00Z", status: "pending", toolCallId: "t1", childRunId: null, decidedBy: null, reason: null },
      { kind: "error", id: "error-r1", message: "budget exceeded", code: "budget_exceeded" },
    ]);
    expect(after.phase).toBe("error");
  });

  it("marks the view expired when the relay no longer has the run's events", async () => {
    const relay = new FakeRelay([
      { id: "9-0", data: { type: "CUSTOM", name: "resume_expired", value: { after: "8-0", reason: "retention" } } },
      { id: "9-1", data: { type: "RUN_FINISHED" } },
    ]);
    const after = await followUntil(relay, new MemoryStore(), view(), null);
    expect(after.phase).toBe("expired");
  });

  it("ignores a corrupt saved entry", () => {
    const store = new MemoryStore();
    store.setItem("pa.run.c1", "{not json");
    expect(loadRun(store, "c1")).toBeNull();
    saveRun(store, view());
    expect(loadRun(store, "c1")?.runId).toBe("r1");
  });
});
