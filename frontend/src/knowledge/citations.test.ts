import { describe, expect, it } from "vitest";

import type { DisplayItem } from "../chat/transcript";
import { citationsByAnswer, parseCitations, whereIn } from "./citations";

const passage = (chunk: string, extra: Record<string, unknown> = {}) => ({
  citation: `handbook.md, § Travel [chunk ${chunk}]`,
  document: "handbook.md",
  document_id: "d1",
  page: null,
  section: "Travel",
  chunk_id: chunk,
  text: "Train tickets need approval.",
  ...extra,
});

const search = (id: string, result: unknown): DisplayItem => ({ kind: "tool", id, name: "search_knowledge", args: {}, result, done: true });
const answer = (id: string, text = "It says so."): DisplayItem => ({ kind: "assistant", id, text, streaming: false });
const user = (id: string): DisplayItem => ({ kind: "user", id, text: "q" });

describe("parseCitations", () => {
  it("reads the live result (a JSON string) and the stored one (parsed)", () => {
    const live = parseCitations(JSON.stringify([passage("c1"), passage("c2", { page: 3, section: null })]));
    expect(live.map((c) => [c.chunkId, c.document, whereIn(c)])).toEqual([
      ["c1", "handbook.md", "§ Travel"],
      ["c2", "handbook.md", "p. 3"],
    ]);
    expect(parseCitations([passage("c3")])[0]!.citation).toBe("handbook.md, § Travel [chunk c3]");
  });

  it("finds nothing in an error, a retry prompt or text", () => {
    expect(parseCitations("q has 1 to 1000 characters")).toEqual([]);
    expect(parseCitations(null)).toEqual([]);
    expect(parseCitations(JSON.stringify([{ text: "no chunk id" }]))).toEqual([]);
    expect(parseCitations("[]")).toEqual([]);
  });
});

describe("citationsByAnswer", () => {
  it("puts a turn's cited passages under the answer that follows the search, once each", () => {
    const items = [
      user("u1"),
      search("t1", JSON.stringify([passage("c1"), passage("c2")])),
      search("t2", [passage("c2"), passage("c3")]),
      answer("a1"),
      user("u2"),
      answer("a2"),
    ];
    const byAnswer = citationsByAnswer(items);
    expect(byAnswer.get("a1")?.map((c) => c.chunkId)).toEqual(["c1", "c2", "c3"]);
    expect(byAnswer.has("a2")).toBe(false); // a later turn without a search cites nothing
  });

  it("gives each answer of a turn only the searches made before it", () => {
    const items = [user("u1"), search("t1", [passage("c1")]), answer("a1"), search("t2", [passage("c2")]), answer("a2")];
    const byAnswer = citationsByAnswer(items);
    expect(byAnswer.get("a1")?.map((c) => c.chunkId)).toEqual(["c1"]);
    expect(byAnswer.get("a2")?.map((c) => c.chunkId)).toEqual(["c2"]);
  });

  it("shows nothing while the search has no result or found nothing", () => {
    expect(citationsByAnswer([user("u"), search("t", null), answer("a")]).size).toBe(0);
    expect(citationsByAnswer([user("u"), search("t", "[]"), answer("a")]).size).toBe(0);
    const other: DisplayItem = { kind: "tool", id: "x", name: "remember", args: {}, result: JSON.stringify([passage("c9")]), done: true };
    expect(citationsByAnswer([user("u"), other, answer("a")]).size).toBe(0);
  });
});
