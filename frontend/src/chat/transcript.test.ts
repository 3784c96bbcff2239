import { describe, expect, it } from "vitest";

import type { Message } from "../api/client";
import { newRunView } from "../stream/runView";
import { buildTranscript, isActiveStatus, storedItems } from "./transcript";

const stored: Message[] = [
  { id: "1:0", role: "user", text: "first", run_id: "r0", created_at: "" },
  { id: "2:0", role: "assistant", text: "", tool_calls: [{ id: "t0", name: "current_time", args: {} }], run_id: "r0", created_at: "" },
  { id: "3:0", role: "tool", tool_call_id: "t0", content: "12:00", run_id: "r0", created_at: "" },
  { id: "4:0", role: "assistant", text: "It is noon.", run_id: "r0", created_at: "" },
  { id: "5:0", role: "user", text: "second", run_id: "r1", created_at: "" },
  { id: "6:0", role: "assistant", text: "partial answer already stored", run_id: "r1", created_at: "" },
];

const empty = { notices: new Map(), approvals: [], decided: new Map(), sending: null };

describe("the transcript shown", () => {
  it("joins tool results to their calls", () => {
    const items = storedItems(stored.slice(0, 4));
    expect(items.map((i) => i.kind)).toEqual(["user", "tool", "assistant"]);
    expect(items[1]).toMatchObject({ name: "current_time", result: "12:00" });
  });

  it("hides the stored replies of the run followed live, never its user message", () => {
    const live = newRunView({ runId: "r1", chatId: "c", eventsUrl: "/e", userText: "second" });
    live.items.push({ kind: "assistant", id: "m", text: "partial answer already stored, and more", streaming: true });
    const items = buildTranscript({ ...empty, messages: stored, live });
    const texts = items.map((i) => ("text" in i ? i.text : i.kind));
    expect(texts).toEqual(["first", "tool", "It is noon.", "second", "partial answer already stored, and more"]);
  });

  it("shows the message being sent, and the live run's own message until it is stored", () => {
    const live = newRunView({ runId: "r2", chatId: "c", eventsUrl: "/e", userText: "third" });
    const items = buildTranscript({ ...empty, messages: stored, live });
    expect(items.at(-1)).toMatchObject({ kind: "user", text: "third", pending: true });
    const sending = buildTranscript({ ...empty, messages: [], live: null, sending: "hello" });
    expect(sending).toEqual([{ kind: "user", id: "sending", text: "hello", pending: true }]);
  });

  it("shows a pending approval once, with a decision taken here", () => {
    const live = newRunView({ runId: "r1", chatId: "c", eventsUrl: "/e" });
    live.items.push({ kind: "approval", id: "a1", tool: "send", args: {}, expiresAt: null, status: "pending" });
    const approvals = [
      { id: "a1", run_id: "r1", chat_id: "c", tool: "send", args: {}, status: "pending", expires_at: "x" },
      { id: "a2", run_id: "r9", chat_id: "c", tool: "post", args: {}, status: "pending", expires_at: "x" },
    ] as never[];
    const items = buildTranscript({ ...empty, messages: [], live, approvals, decided: new Map([["a1", "approved" as const]]) });
    expect(items.map((i) => [i.id, "status" in i ? i.status : null])).toEqual([
      ["a1", "approved"],
      ["a2", "pending"],
    ]);
  });

  it("marks the parts the API cut as truncated, a tool call's by its arguments or its result", () => {
    const cut: Message[] = [
      { id: "1:0", role: "user", text: "a very long paste", run_id: null, created_at: "", truncated: true },
      { id: "2:0", role: "assistant", text: "", tool_calls: [{ id: "t1", name: "read", args: "{\"pa" }], run_id: null, created_at: "", truncated: true },
      { id: "3:0", role: "tool", tool_call_id: "t1", content: "ok", run_id: null, created_at: "" },
      { id: "4:0", role: "assistant", text: "", tool_calls: [{ id: "t2", name: "fetch", args: {} }], run_id: null, created_at: "" },
      { id: "5:0", role: "tool", tool_call_id: "t2", content: "a long page", run_id: null, created_at: "", truncated: true },
      { id: "6:0", role: "assistant", text: "short", run_id: null, created_at: "" },
    ];
    expect(storedItems(cut).map((i) => [i.kind, "truncated" in i && i.truncated])).toEqual([
      ["user", true],
      ["tool", true],
      ["tool", true],
      ["assistant", false],
    ]);
  });

  it("knows which run statuses are still going", () => {
    expect(["queued", "running", "waiting"].map(isActiveStatus)).toEqual([true, true, true]);
    expect(["succeeded", "failed", "cancelled", "skipped", null].map(isActiveStatus)).toEqual([false, false, false, false, false]);
  });
});
