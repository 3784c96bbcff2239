import { describe, expect, it } from "vitest";

import type { AguiEvent } from "./agui";
import { applyEvent, assistantText, newRunView } from "./runView";

const view = () => newRunView({ runId: "r", chatId: "c", eventsUrl: "/e" });
const apply = (v: ReturnType<typeof view>, events: unknown[]) => events.forEach((e, i) => applyEvent(v, e as AguiEvent, `${i + 1}-0`));

describe("the live view of a run", () => {
  it("stays running through an approval interrupt, and marks the approval answered when the run goes on", () => {
    const v = view();
    apply(v, [
      { type: "RUN_STARTED" },
      { type: "CUSTOM", name: "approval_requested", value: { approval_id: "a", run_id: "r", tool: "send", tool_call_id: "t", args: { to: "x" }, expires_at: "2030-01-01T00:00:00Z" } },
      { type: "RUN_FINISHED", outcome: { type: "interrupt", interrupts: [{ id: "a" }] } },
    ]);
    expect(v.phase).toBe("running");
    expect(v.items[0]).toMatchObject({ kind: "approval", status: "pending" });
    apply(v, [{ type: "RUN_STARTED" }, { type: "RUN_FINISHED", outcome: { type: "success" } }]);
    expect(v.items[0]).toMatchObject({ kind: "approval", status: "decided" });
    expect(v.phase).toBe("finished");
  });

  it("tells a tool call that was denied or failed from one that succeeded (the result's metadata.outcome)", () => {
    const v = view();
    apply(v, [
      { type: "TOOL_CALL_START", toolCallId: "ok", toolCallName: "current_time" },
      { type: "TOOL_CALL_RESULT", toolCallId: "ok", messageId: "x", content: "12:00" },
      { type: "TOOL_CALL_START", toolCallId: "no", toolCallName: "send" },
      { type: "TOOL_CALL_RESULT", toolCallId: "no", messageId: "y", content: "not approved", metadata: { outcome: "denied" } },
      { type: "TOOL_CALL_START", toolCallId: "bad", toolCallName: "fetch" },
      { type: "TOOL_CALL_RESULT", toolCallId: "bad", messageId: "z", content: "boom", metadata: { outcome: "failed" } },
    ]);
    expect(v.items.map((i) => (i.kind === "tool" ? [i.id, i.failure] : null))).toEqual([
      ["ok", null],
      ["no", "denied"],
      ["bad", "failed"],
    ]);
  });

  it("shows a stop once, from run_cancelled and the cancelled RUN_FINISHED after it", () => {
    const v = view();
    apply(v, [
      { type: "TEXT_MESSAGE_START", messageId: "m" },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "Hal" },
      { type: "CUSTOM", name: "run_cancelled", value: { run_id: "r" } },
      { type: "RUN_FINISHED", outcome: { type: "cancelled" } },
    ]);
    expect(v.phase).toBe("cancelled");
    expect(v.items.filter((i) => i.kind === "notice")).toHaveLength(1);
    expect(v.items[0]).toMatchObject({ kind: "assistant", text: "Hal", streaming: false });
    expect(v.lastEventId).toBe("4-0");
  });

  it("replaces what a resumed run streams again instead of repeating it", () => {
    const v = view();
    apply(v, [
      { type: "RUN_STARTED" },
      { type: "TOOL_CALL_START", toolCallId: "t", toolCallName: "probe" },
      { type: "TOOL_CALL_ARGS", toolCallId: "t", delta: '{"round":' },
      { type: "TEXT_MESSAGE_START", messageId: "m" },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "Step 1. " },
      // the worker died here; a new one resumed the run from its last checkpoint and asked the model again
      { type: "CUSTOM", name: "run_resumed", value: { run_id: "r", attempt: 2 } },
      { type: "TOOL_CALL_START", toolCallId: "t", toolCallName: "probe" },
      { type: "TOOL_CALL_ARGS", toolCallId: "t", delta: '{"round":1}' },
      { type: "TOOL_CALL_END", toolCallId: "t" },
      { type: "TEXT_MESSAGE_START", messageId: "m" },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "Step 1. All done." },
      { type: "TEXT_MESSAGE_END", messageId: "m" },
      { type: "RUN_FINISHED", outcome: { type: "success" } },
    ]);
    expect(assistantText(v)).toBe("Step 1. All done.");
    expect(v.items.find((i) => i.kind === "tool")).toMatchObject({ args: '{"round":1}', done: true });
    expect(v.phase).toBe("finished");
  });

  it("accepts the chunk forms of text and tool calls", () => {
    const v = view();
    apply(v, [
      { type: "TEXT_MESSAGE_CHUNK", messageId: "m", delta: "a" },
      { type: "TEXT_MESSAGE_CHUNK", delta: "b" },
      { type: "TOOL_CALL_CHUNK", toolCallId: "t", toolCallName: "calc", delta: '{"x":' },
      { type: "TOOL_CALL_CHUNK", delta: "1}" },
      { type: "SOMETHING_NEW_IN_THE_PROTOCOL" },
    ]);
    expect(assistantText(v)).toBe("ab");
    expect(v.items[1]).toMatchObject({ kind: "tool", name: "calc", args: '{"x":1}' });
  });
});
