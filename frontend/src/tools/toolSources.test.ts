import { afterEach, describe, expect, it, vi } from "vitest";
import { nextTick } from "vue";

import type { RunTool } from "../api/client";
import { forgetSources, loadSources, sourcesOf, toolRunIds, toolSource } from "./toolSources";

const tools: RunTool[] = [
  { name: "outside_weather", server: "outside", trust_tier: 0, acts: false, untrusted: true },
  { name: "calculate", server: null, trust_tier: 2, acts: false, untrusted: false },
];

afterEach(forgetSources);

describe("where a tool call's tool comes from", () => {
  it("reads the run's tool snapshot", () => {
    const sources = sourcesOf(tools);
    expect(sources.get("outside_weather")).toEqual({ server: "outside", tier: 0, untrusted: true, acts: false });
    expect(sources.get("calculate")).toEqual({ server: null, tier: 2, untrusted: false, acts: false });
  });

  it("loads each run's snapshot once and answers from it", async () => {
    const getRun = vi.fn(async (id: string) => ({ tools: id === "r1" ? tools : [] }));
    loadSources(["r1", "r2"], getRun);
    loadSources(["r1"], getRun);
    expect(toolSource("r1", "outside_weather")).toBeNull(); // not loaded yet
    await nextTick();
    await Promise.resolve();
    expect(getRun.mock.calls.map((c) => c[0])).toEqual(["r1", "r2"]);
    expect(toolSource("r1", "outside_weather")).toMatchObject({ server: "outside", tier: 0, untrusted: true });
    expect(toolSource("r2", "outside_weather")).toBeNull();
    expect(toolSource(null, "calculate")).toBeNull();
  });

  it("a run that cannot be read shows no source and is not asked again", async () => {
    const getRun = vi.fn(async () => {
      throw new Error("404");
    });
    loadSources(["r9"], getRun);
    await Promise.resolve();
    await Promise.resolve();
    loadSources(["r9"], getRun);
    expect(getRun).toHaveBeenCalledTimes(1);
    expect(toolSource("r9", "calculate")).toBeNull();
  });

  it("collects the run ids of the tool cards shown", () => {
    const items = [
      { kind: "user" },
      { kind: "tool", runId: "r1" },
      { kind: "tool", runId: "r1" },
      { kind: "tool", runId: null },
      { kind: "tool", runId: "r2" },
    ];
    expect(toolRunIds(items)).toEqual(["r1", "r2"]);
  });
});
