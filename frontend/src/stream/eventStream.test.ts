import { describe, expect, it } from "vitest";

import { type AguiEvent, isTerminalEvent } from "./agui";
import { EventStream, type StreamState } from "./eventStream";
import { FakeRelay, noSleep, scriptedRun } from "./testing";

function collect(relay: FakeRelay, extra: Partial<ConstructorParameters<typeof EventStream<AguiEvent>>[0]> = {}) {
  const seen: { id: string | null; event: AguiEvent }[] = [];
  const states: StreamState[] = [];
  const stream = new EventStream<AguiEvent>({
    url: "/api/v1/runs/r1/events",
    getToken: () => "tok",
    fetch: relay.fetch,
    sleep: noSleep,
    isTerminal: isTerminalEvent,
    onEvent: (event, id) => seen.push({ id, event }),
    onState: (state) => states.push(state),
    ...extra,
  });
  return { stream, seen, states };
}

const ids = (seen: { id: string | null }[]) => seen.map((s) => s.id);

describe("EventStream", () => {
  it("streams a run in one connection with the bearer token and stops at RUN_FINISHED", async () => {
    const relay = new FakeRelay(scriptedRun());
    const { stream, seen, states } = collect(relay);
    await stream.start();
    expect(ids(seen)).toEqual(relay.events.map((e) => e.id));
    expect(relay.requests).toHaveLength(1);
    expect(relay.requests[0]).toMatchObject({ lastEventId: null, authorization: "Bearer tok" });
    expect(states.at(-1)).toBe("done");
    expect(stream.lastEventId).toBe(relay.events.at(-1)!.id);
  });

  it("reconnects with Last-Event-ID when the relay closes the stream (max lifetime)", async () => {
    const relay = new FakeRelay(scriptedRun(), { perConnection: 4 });
    const { stream, seen } = collect(relay);
    await stream.start();
    expect(ids(seen)).toEqual(relay.events.map((e) => e.id));
    const expectedHeaders: (string | null)[] = [null];
    for (let i = 3; i < relay.events.length - 1; i += 4) expectedHeaders.push(relay.events[i]!.id);
    expect(relay.requests.map((r) => r.lastEventId)).toEqual(expectedHeaders);
  });

  it("drops replayed events when a relay ignores Last-Event-ID", async () => {
    const relay = new FakeRelay(scriptedRun(), { perConnection: 5, ignoreLastEventId: true });
    // Each connection replays from the start, so only events 0..4 ever arrive: they are applied once.
    const { stream, seen } = collect(relay, { isFinished: async () => relay.requests.length >= 3 });
    await stream.start();
    expect(ids(seen)).toEqual(relay.events.slice(0, 5).map((e) => e.id));
  });

  it("resumes after a given id without asking for anything earlier", async () => {
    const relay = new FakeRelay(scriptedRun());
    const { stream, seen } = collect(relay, { lastEventId: relay.events[6]!.id });
    await stream.start();
    expect(relay.requests[0]!.lastEventId).toBe(relay.events[6]!.id);
    expect(ids(seen)).toEqual(relay.events.slice(7).map((e) => e.id));
  });

  it("parses events cut into small chunks and skips heartbeats", async () => {
    const relay = new FakeRelay(scriptedRun(), { chunkSize: 7, heartbeat: true });
    const { stream, seen } = collect(relay);
    await stream.start();
    expect(seen).toHaveLength(relay.events.length);
  });

  it("reads CRLF line endings and a byte order mark, split anywhere, and reconnects after the relay's retry hint", async () => {
    const relay = new FakeRelay(scriptedRun(), { perConnection: 6, chunkSize: 1, crlfWithBom: true, retryHint: 1234 });
    const delays: number[] = [];
    const { stream, seen } = collect(relay, { sleep: async (ms) => void delays.push(ms) });
    await stream.start();
    expect(seen.map((s) => s.event)).toEqual(relay.events.map((e) => e.data));
    expect(ids(seen)).toEqual(relay.events.map((e) => e.id));
    expect(delays).toEqual([1234, 1234, 1234]);
  });

  it("hands over an event whose data is not JSON as malformed, and goes on", async () => {
    const events = scriptedRun();
    const relay = new FakeRelay(events);
    // One event's data is cut over two `data:` lines that do not make JSON.
    const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
      const body = await (await relay.fetch(input, init)).text();
      return new Response(body.replace(`data: ${JSON.stringify(events[1]!.data)}`, "data: {not json\ndata: }"));
    };
    const malformed: [string, string | null][] = [];
    const { stream, seen } = collect(relay, { fetch, onMalformed: (data, id) => void malformed.push([data, id]) });
    await stream.start();
    expect(malformed).toEqual([["{not json\n}", events[1]!.id]]);
    expect(ids(seen)).toEqual(events.filter((_, i) => i !== 1).map((e) => e.id));
  });

  it("backs off and retries after server errors and network errors, then resumes", async () => {
    const relay = new FakeRelay(scriptedRun(), { failFirst: [503, 0, 502] });
    const delays: number[] = [];
    const { stream, seen } = collect(relay, {
      initialDelayMs: 100,
      sleep: async (ms) => void delays.push(ms),
    });
    await stream.start();
    expect(delays).toEqual([100, 200, 400]);
    expect(ids(seen)).toEqual(relay.events.map((e) => e.id));
  });

  it("waits out Retry-After when the relay refuses a stream for having too many open (429)", async () => {
    const relay = new FakeRelay(scriptedRun(), { failFirst: [429, 429], retryAfter: 7 });
    const delays: number[] = [];
    const { stream, seen, states } = collect(relay, {
      initialDelayMs: 100,
      sleep: async (ms) => void delays.push(ms),
    });
    await stream.start();
    expect(delays).toEqual([7000, 7000]);
    expect(ids(seen)).toEqual(relay.events.map((e) => e.id));
    expect(states.at(-1)).toBe("done");
  });

  it("gives up after too many consecutive failures", async () => {
    const relay = new FakeRelay(scriptedRun(), { failFirst: [500, 500, 500] });
    const { stream, seen, states } = collect(relay, { maxFailures: 3 });
    await stream.start();
    expect(seen).toHaveLength(0);
    expect(states.at(-1)).toBe("failed");
  });

  it("does not retry a run that does not exist", async () => {
    const relay = new FakeRelay(scriptedRun(), { failFirst: [404] });
    const { stream, states } = collect(relay);
    await stream.start();
    expect(relay.requests).toHaveLength(1);
    expect(states.at(-1)).toBe("failed");
  });

  it("retries once with a fresh token after a 401", async () => {
    const relay = new FakeRelay(scriptedRun(), { failFirst: [401] });
    let n = 0;
    const { stream, seen } = collect(relay, { getToken: () => `tok${++n}` });
    await stream.start();
    expect(relay.requests.map((r) => r.authorization)).toEqual(["Bearer tok1", "Bearer tok2"]);
    expect(seen).toHaveLength(relay.events.length);
  });

  it("stops when the stream ends without a terminal event and the run is over", async () => {
    const events = scriptedRun().slice(0, -1); // no RUN_FINISHED on the bus
    const relay = new FakeRelay(events);
    const { stream, states } = collect(relay, { isFinished: async () => true });
    await stream.start();
    expect(relay.requests).toHaveLength(1);
    expect(states.at(-1)).toBe("done");
  });

  it("close() detaches without further requests", async () => {
    const relay = new FakeRelay(scriptedRun(), { perConnection: 2 });
    const { stream, seen } = collect(relay, {
      onEvent: (_e, id) => {
        seen.push({ id, event: _e });
        if (seen.length === 3) stream.close();
      },
    });
    await stream.start();
    expect(seen).toHaveLength(3);
    expect(relay.requests).toHaveLength(2);
    expect(stream.state).toBe("closed");
  });

  it("keeps streaming through an approval interrupt until the run really finishes", async () => {
    const data = [
      { type: "RUN_STARTED" },
      { type: "CUSTOM", name: "approval_requested", value: { approval_id: "a1", run_id: "r", tool: "send", tool_call_id: "t", args: {}, expires_at: "2030-01-01T00:00:00Z" } },
      { type: "RUN_FINISHED", outcome: { type: "interrupt", interrupts: [{ id: "a1" }] } },
      { type: "RUN_STARTED" },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "sent" },
      { type: "RUN_FINISHED", outcome: { type: "success" } },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "never read" },
    ];
    const relay = new FakeRelay(data.map((d, i) => ({ id: `${i + 1}-0`, data: d })));
    const { stream, seen, states } = collect(relay);
    await stream.start();
    expect(ids(seen)).toEqual(["1-0", "2-0", "3-0", "4-0", "5-0", "6-0"]);
    expect(relay.requests).toHaveLength(1);
    expect(states.at(-1)).toBe("done");
  });

  it("stops at resume_expired (the events are gone; the transcript is reloaded instead)", async () => {
    const relay = new FakeRelay([{ id: "", data: { type: "CUSTOM", name: "resume_expired", value: { after: "1-0", reason: "retention" } } }]);
    const { stream, seen } = collect(relay, { lastEventId: "1-0" });
    await stream.start();
    expect(seen).toHaveLength(1);
    expect(relay.requests).toHaveLength(1);
  });
});
