import { describe, expect, it } from "vitest";

import type { Tool } from "../api/client";
import { choiceKey, loadChoice, saveChoice, selectedNames, toggled, toolFacts, toolsForRun } from "./toolChoice";

const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({
  name,
  description: "",
  source: "first_party",
  server_id: null,
  server: null,
  trust_tier: 2,
  acts: false,
  approval: "gate",
  default: false,
  ...extra,
});

const catalog = [
  tool("current_time", { default: true }),
  tool("calculate", { default: true }),
  tool("demo_weather", { source: "mcp", server: "demo", trust_tier: 0 }),
  tool("demo_post_note", { source: "mcp", server: "demo", trust_tier: 0, acts: true }),
];

class MemoryStorage implements Storage {
  private data = new Map<string, string>();
  get length() {
    return this.data.size;
  }
  clear() {
    this.data.clear();
  }
  getItem(key: string) {
    return this.data.get(key) ?? null;
  }
  key(i: number) {
    return [...this.data.keys()][i] ?? null;
  }
  removeItem(key: string) {
    this.data.delete(key);
  }
  setItem(key: string, value: string) {
    this.data.set(key, value);
  }
}

describe("a chat's tool choice", () => {
  it("starts from the defaults and sends nothing until the user chooses", () => {
    expect(selectedNames(null, catalog)).toEqual(["current_time", "calculate"]);
    expect(toolsForRun(null, catalog)).toBeNull();
  });

  it("ticking a tool keeps the defaults ticked and the catalog's order", () => {
    const saved = toggled(null, catalog, "demo_weather", true);
    expect(saved).toEqual(["current_time", "calculate", "demo_weather"]);
    expect(toggled(saved, catalog, "current_time", false)).toEqual(["calculate", "demo_weather"]);
    expect(toolsForRun(["demo_weather"], catalog)).toEqual(["demo_weather"]);
    expect(toolsForRun([], catalog)).toEqual([]); // no tools at all is a choice too
  });

  it("drops a saved tool the catalog no longer offers", () => {
    expect(toolsForRun(["demo_weather", "gone_tool"], catalog)).toEqual(["demo_weather"]);
  });

  it("is remembered per chat", () => {
    const store = new MemoryStorage();
    saveChoice(store, "chat-a", ["demo_weather"]);
    expect(loadChoice(store, "chat-a")).toEqual(["demo_weather"]);
    expect(loadChoice(store, "chat-b")).toBeNull();
    saveChoice(store, "chat-a", null);
    expect(loadChoice(store, "chat-a")).toBeNull();
    store.setItem(choiceKey("chat-c"), "{not json");
    expect(loadChoice(store, "chat-c")).toBeNull();
    store.setItem(choiceKey("chat-d"), JSON.stringify([1, 2]));
    expect(loadChoice(store, "chat-d")).toBeNull();
    expect(loadChoice(null, "chat-a")).toBeNull();
  });

  it("describes a tool by its source, tier and whether it acts", () => {
    expect(toolFacts(catalog[3]!)).toBe("from demo · can act");
    expect(toolFacts(catalog[0]!)).toBe("built in");
  });
});
