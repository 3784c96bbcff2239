import { describe, expect, it } from "vitest";

import { byName, inScope } from "./agents";

type Row = Parameters<typeof inScope>[0][number];
const row = (slug: string, extra: Partial<Row>): Row => ({ slug, name: slug, builtin: false, visibility: "private", owner_id: null, ...extra }) as Row;

describe("the agents a person explores", () => {
  const items = [
    row("assistant", { builtin: true, visibility: "org" }),
    row("shared", { visibility: "org", owner_id: "u2" }),
    row("mine", { owner_id: "u1" }),
    row("mine-shared", { visibility: "org", owner_id: "u1" }),
  ];

  it("the organisation's: the built-in and the shared ones", () => {
    expect(inScope(items, "org", "u1").map((a) => a.slug)).toEqual(["assistant", "shared", "mine-shared"]);
  });

  it("mine: those the person owns, shared or not", () => {
    expect(inScope(items, "mine", "u1").map((a) => a.slug)).toEqual(["mine", "mine-shared"]);
    expect(inScope(items, "mine", null)).toEqual([]);
  });

  it("lists the built-in assistant first, then by name", () => {
    const sorted = [row("b", {}), row("a", {}), row("assistant", { builtin: true, name: "Zed" })].sort(byName);
    expect(sorted.map((a) => a.slug)).toEqual(["assistant", "a", "b"]);
  });
});
