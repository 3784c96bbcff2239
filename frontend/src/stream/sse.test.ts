import { describe, expect, it } from "vitest";

import { SseParser } from "./sse";

function parseAll(chunks: string[]) {
  const parser = new SseParser();
  return chunks.flatMap((c) => parser.feed(c));
}

describe("SseParser", () => {
  it("parses ids, data and ignores comment heartbeats", () => {
    const out = parseAll([": ping\n\nid: 1-0\ndata: {\"a\":1}\n\n: ping\n\n"]);
    expect(out).toEqual([{ id: "1-0", event: "message", data: '{"a":1}', retry: null }]);
  });

  it("handles events split at every possible point, and CRLF line endings", () => {
    const body = "id: 1-0\r\ndata: one\r\n\r\nid: 2-0\r\nevent: x\r\ndata: two\r\ndata: lines\r\n\r\n";
    const whole = parseAll([body]);
    for (let cut = 1; cut < body.length; cut++) {
      expect(parseAll([body.slice(0, cut), body.slice(cut)])).toEqual(whole);
    }
    expect(whole.map((m) => [m.id, m.event, m.data])).toEqual([
      ["1-0", "message", "one"],
      ["2-0", "x", "two\nlines"],
    ]);
  });

  it("reads retry hints and the no-space field form", () => {
    expect(parseAll(["retry: 3000\nid:5-1\ndata:x\n\n"])).toEqual([{ id: "5-1", event: "message", data: "x", retry: 3000 }]);
  });

  it("drops a leading byte order mark", () => {
    expect(parseAll(["\ufeffdata: a\n\n"])[0]?.data).toBe("a");
  });
});
