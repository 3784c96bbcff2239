import { afterEach, describe, expect, it, vi } from "vitest";

// The feed's one connection, captured: the test hands it the events the server would announce.
const opened: { onEvent: (event: unknown) => void }[] = [];
vi.mock("../stream/eventStream", () => ({
  EventStream: class {
    constructor(readonly options: { onEvent: (event: unknown) => void }) {
      opened.push(options);
    }
    start() {
      return Promise.resolve();
    }
    close() {}
  },
}));

const { onFeed, onInboxChange, startFeed, stopFeed } = await import("./feed");

afterEach(() => {
  stopFeed();
  opened.length = 0;
});

describe("the feed", () => {
  it("tells the inbox when a question is asked or an approval requested, and run listeners of runs only", () => {
    const inbox = vi.fn();
    const runs = vi.fn();
    const stopInbox = onInboxChange(inbox);
    const stopRuns = onFeed(runs);
    startFeed();
    const feed = opened[0]!;
    const question = { question_id: "q1", run_id: "r1", chat_id: "c1", question: "Which colour?" };
    feed.onEvent({ type: "CUSTOM", name: "question_asked", value: question });
    feed.onEvent({ type: "CUSTOM", name: "approval_requested", value: { run_id: "r1", chat_id: "c1", count: 1 } });
    expect(inbox).toHaveBeenCalledTimes(2);
    expect(runs).not.toHaveBeenCalled();

    feed.onEvent({ type: "CUSTOM", name: "run_finished", value: { run_id: "r1", chat_id: "c1", status: "succeeded" } });
    expect(runs).toHaveBeenCalledTimes(1);
    expect(inbox).toHaveBeenCalledTimes(2);

    stopInbox();
    stopRuns();
    feed.onEvent({ type: "CUSTOM", name: "question_asked", value: question });
    expect(inbox).toHaveBeenCalledTimes(2);
  });
});
