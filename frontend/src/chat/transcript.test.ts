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
    live.items.push({ kind: "approval", id: "a1", tool: "send", args: {}, expiresAt: null, status: "pending", toolCallId: null, childRunId: null, decidedBy: null, reason: null });
    const approvals = [
      { id: "a1", run_id: "r1", chat_id: "c", tool: "send", args: {}, status: "pending", expires_at: "x" },
      { id: "a2", run_id: "r9", chat_id: "c", tool: "post", args: {}, status: "pending", expires_at: "x" },
    ] as never[];
    const items = buildTranscript({ ...empty, messages: [], live, approvals, decided: new Map([["a1", { status: "approved" as const, reason: null }]]) });
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

  it("puts a call's approval and sub-agent right after it, the same for live and stored items", () => {
    const approval = (id: string, status: string, by: string | null, reason: string | null) =>
      ({ id, tool: "send", args: {}, status, decided_by: by, reason, decided_at: null, expires_at: "x" }) as never;
    const subagent = { run_id: "k1", task: "look", preset: null, status: "succeeded", error: null, cost_usd: 0.5, events_url: "/k1", approvals: [] };
    const messages: Message[] = [
      { id: "1:0", role: "user", text: "go", run_id: "r", created_at: "" },
      { id: "2:0", role: "assistant", text: "", tool_calls: [{ id: "t1", name: "send", args: {}, approval: approval("a1", "approved", "alice", "fine") }, { id: "t2", name: "send", args: {}, approval: approval("a2", "denied", "bob", null) }], run_id: "r", created_at: "" },
      { id: "3:0", role: "tool", tool_call_id: "t1", content: "sent", outcome: "done", run_id: "r", created_at: "" },
      { id: "3:1", role: "tool", tool_call_id: "t2", content: "not approved", outcome: "denied", run_id: "r", created_at: "" },
      { id: "4:0", role: "assistant", text: "", tool_calls: [{ id: "d1", name: "delegate", args: {}, subagent }], run_id: "r", created_at: "" },
      { id: "5:0", role: "tool", tool_call_id: "d1", content: "42", outcome: "done", run_id: "r", created_at: "" },
      { id: "6:0", role: "assistant", text: "done", run_id: "r", created_at: "" },
    ];
    const runs = new Map([["r", { id: "r", status: "failed", error: { code: "model_error", message: "boom" } }]]);
    const stored = buildTranscript({ ...empty, messages, runs, live: null });
    expect(stored.map((i) => `${i.kind}:${i.id}`)).toEqual(["user:1:0", "tool:t1", "approval:a1", "tool:t2", "approval:a2", "tool:d1", "subagent:k1", "assistant:6:0", "error:error-r"]);
    expect(stored[3]).toMatchObject({ failure: "denied" });
    expect(stored[2]).toMatchObject({ status: "approved", decidedBy: "alice", reason: "fine" });
    expect(stored[6]).toMatchObject({ answer: "42", costUsd: 0.5 });

    // Live, the approvals arrive after both calls: they are shown after their own call all the same.
    const live = newRunView({ runId: "r", chatId: "c", eventsUrl: "/e" });
    const tool = (id: string) => ({ kind: "tool" as const, id, name: "send", args: "{}", result: null, done: true, failure: null });
    const pending = (id: string, toolCallId: string) => ({ kind: "approval" as const, id, tool: "send", args: {}, expiresAt: null, status: "pending" as const, toolCallId, childRunId: null, decidedBy: null, reason: null });
    live.items.push(tool("t1"), tool("t2"), pending("a1", "t1"), pending("a2", "t2"));
    const shown = buildTranscript({ ...empty, messages: messages.slice(0, 1), live, decided: new Map([["a1", { status: "approved" as const, reason: "fine" }]]) });
    expect(shown.map((i) => `${i.kind}:${i.id}`)).toEqual(["user:1:0", "tool:t1", "approval:a1", "tool:t2", "approval:a2"]);
    expect(shown[2]).toMatchObject({ status: "approved", decidedBy: "you", reason: "fine" });
  });

  it("knows which run statuses are still going", () => {
    expect(["queued", "running", "waiting"].map(isActiveStatus)).toEqual([true, true, true]);
    expect(["succeeded", "failed", "cancelled", "skipped", null].map(isActiveStatus)).toEqual([false, false, false, false, false]);
  });
});
