import { describe, expect, it } from "vitest";

import { fieldName, plainValue } from "./plainValue";

describe("a tool's values in plain words", () => {
  it("shows text as text, JSON text as what it holds", () => {
    expect(plainValue("It is sunny")).toEqual({ kind: "text", text: "It is sunny" });
    expect(plainValue('"2026-01-01T10:00:00Z"')).toEqual({ kind: "text", text: "2026-01-01T10:00:00Z" });
    expect(plainValue("")).toEqual({ kind: "empty" });
    expect(plainValue(null)).toEqual({ kind: "empty" });
  });

  it("shows a flat record as named fields and nested data as JSON", () => {
    expect(plainValue('{"city": "Paris", "max_results": 3, "tags": ["a", "b"]}')).toEqual({
      kind: "fields",
      fields: [
        { name: "City", value: "Paris" },
        { name: "Max results", value: "3" },
        { name: "Tags", value: "a, b" },
      ],
    });
    expect(plainValue({ hits: [{ id: 1 }] })).toEqual({ kind: "json" });
    expect(fieldName("toolCallId")).toBe("Tool call id");
  });
});
