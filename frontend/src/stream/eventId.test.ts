import { describe, expect, it } from "vitest";

import { compareEventIds, EventIdTracker } from "./eventId";

describe("event ids", () => {
  it("orders Redis stream ids numerically, not as strings", () => {
    expect(compareEventIds("9-0", "10-0")).toBeLessThan(0);
    expect(compareEventIds("10-2", "10-10")).toBeLessThan(0);
    expect(compareEventIds("10-1", "10-1")).toBe(0);
    expect(compareEventIds("abc", "10-1")).toBeNull();
  });

  it("orders the events of one batch entry by index, the entry's own id last", () => {
    expect(compareEventIds("10-1.0", "10-1.1")).toBeLessThan(0);
    expect(compareEventIds("10-1.9", "10-1.10")).toBeLessThan(0);
    expect(compareEventIds("10-1.10", "10-1")).toBeLessThan(0);
    expect(compareEventIds("10-1", "10-2.0")).toBeLessThan(0);
    expect(compareEventIds("10-0", "10-1.0")).toBeLessThan(0);
    expect(compareEventIds("10-1.3", "10-1.3")).toBe(0);
    expect(compareEventIds("10-1.x", "10-1")).toBeNull();
  });

  it("drops a replay from inside a batch and takes what follows it", () => {
    const ids = new EventIdTracker("100-1.2");
    expect(ids.accept("100-1.1")).toBe(false);
    expect(ids.accept("100-1.2")).toBe(false);
    expect(ids.accept("100-1.3")).toBe(true);
    expect(ids.accept("100-1")).toBe(true);
    expect(ids.accept("100-1.4")).toBe(false);
    expect(ids.accept("100-2.0")).toBe(true);
    expect(ids.last).toBe("100-2.0");
  });

  it("accepts only ids after the last one", () => {
    const ids = new EventIdTracker("100-1");
    expect(ids.accept("100-0")).toBe(false);
    expect(ids.accept("100-1")).toBe(false);
    expect(ids.accept("100-2")).toBe(true);
    expect(ids.accept("100-2")).toBe(false);
    expect(ids.accept(null)).toBe(true);
    expect(ids.last).toBe("100-2");
  });

  it("falls back to a seen set for ids of another shape", () => {
    const ids = new EventIdTracker();
    expect(ids.accept("a")).toBe(true);
    expect(ids.accept("b")).toBe(true);
    expect(ids.accept("a")).toBe(false);
  });
});
