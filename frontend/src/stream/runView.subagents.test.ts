import { describe, expect, it } from "vitest";

import type { AguiEvent } from "./agui";
import type { RunEventName, RunEventValue } from "./customEvents";
import { applyEvent, newRunView } from "./runView";

const custom = <N extends RunEventName>(name: N, value: RunEventValue<N>) => ({ type: "CUSTOM", name, value }) as unknown as AguiEvent;

describe("sub-agents in the live view of a run", () => {
  it("adds one card per child when it starts and shows its outcome and answer when it finishes", () => {
    const view = newRunView({ runId: "p", chatId: "c", eventsUrl: "/e" });
    const ids = { child_run_id: "k1", parent_run_id: "p", tool_call_id: "d0", events_url: "/api/v1/runs/k1/events" };
    const started = { model: "demo", tools: [], depth: 1 };
    applyEvent(view, custom("subagent_started", { ...ids, ...started, task: "look it up", preset: "explore" }), "1-0");
    applyEvent(view, custom("subagent_started", { ...ids, ...started, child_run_id: "k2", task: "other", preset: null }), "2-0");
    applyEvent(view, custom("subagent_progress", { ...ids, request_index: 0, tool_calls: [] }), "3-0");
    applyEvent(view, custom("subagent_finished", { ...ids, status: "succeeded", answer: "42" }), "4-0");
    applyEvent(view, custom("subagent_started", { ...ids, ...started, task: "look it up", preset: "explore" }), "5-0"); // replayed

    expect(view.items).toEqual([
      { kind: "subagent", id: "k1", task: "look it up", preset: "explore", eventsUrl: "/api/v1/runs/k1/events", status: "succeeded", answer: "42", toolCallId: "d0", error: null, costUsd: null },
      { kind: "subagent", id: "k2", task: "other", preset: null, eventsUrl: "/api/v1/runs/k1/events", status: "running", answer: null, toolCallId: "d0", error: null, costUsd: null },
    ]);
    expect(view.phase).toBe("running");
  });
});
