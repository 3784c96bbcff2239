import { describe, expect, it } from "vitest";

import { diffLines, fieldDiff, renderDiff, showValue } from "./diff";

describe("diffLines", () => {
  it("keeps common lines and marks the removed and added ones", () => {
    expect(diffLines("a\nb\nc", "a\nx\nc")).toEqual([
      { op: "same", text: "a" },
      { op: "del", text: "b" },
      { op: "add", text: "x" },
      { op: "same", text: "c" },
    ]);
  });

  it("handles text added at the end and removed at the start", () => {
    expect(diffLines("one\ntwo", "two\nthree")).toEqual([
      { op: "del", text: "one" },
      { op: "same", text: "two" },
      { op: "add", text: "three" },
    ]);
  });

  it("is all unchanged for equal text", () => {
    expect(diffLines("same", "same")).toEqual([{ op: "same", text: "same" }]);
  });
});

describe("fieldDiff", () => {
  it("shows instructions as changed lines", () => {
    const d = fieldDiff({ field: "instructions", a: "Be brief.", b: "Be thorough." });
    expect(d).toEqual({
      field: "instructions",
      label: "Instructions",
      kind: "lines",
      lines: [
        { op: "del", text: "Be brief." },
        { op: "add", text: "Be thorough." },
      ],
    });
  });

  it("shows tools as what was added and removed", () => {
    const d = fieldDiff({ field: "tools", a: ["search_knowledge", "remember"], b: ["remember", "send_email"] });
    expect(d).toMatchObject({ kind: "set", added: ["send_email"], removed: ["search_knowledge"] });
  });

  it("says what null means: the default tools, the org's default model", () => {
    expect(fieldDiff({ field: "tools", a: null, b: ["remember"] })).toMatchObject({ kind: "value", a: "the default tools", b: '["remember"]' });
    expect(fieldDiff({ field: "model", a: null, b: "auto" })).toMatchObject({ kind: "value", a: "the org's default", b: "auto" });
  });

  it("shows approval overrides per tool", () => {
    const d = fieldDiff({ field: "approval", a: {}, b: { send_email: "always" } });
    expect(d).toMatchObject({ kind: "set", added: ["send_email: always"], removed: [] });
  });

  it("shows booleans as on and off", () => {
    expect(showValue("memory", false)).toBe("off");
    expect(fieldDiff({ field: "memory", a: true, b: false })).toMatchObject({ kind: "value", label: "Memory", a: "on", b: "off" });
  });

  it("diffs two output schemas line by line", () => {
    const d = fieldDiff({ field: "output_schema", a: { type: "object" }, b: { type: "object", required: ["x"] } });
    expect(d.kind).toBe("lines");
    if (d.kind === "lines") expect(d.lines.filter((l) => l.op !== "same").map((l) => l.op)).toContain("add");
  });
});

describe("renderDiff", () => {
  it("orders changes as the form does", () => {
    const rendered = renderDiff([
      { field: "memory", a: true, b: false },
      { field: "name", a: "A", b: "B" },
      { field: "instructions", a: "x", b: "y" },
    ]);
    expect(rendered.map((d) => d.field)).toEqual(["name", "instructions", "memory"]);
  });
});
