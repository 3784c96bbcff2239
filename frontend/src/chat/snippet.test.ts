import { describe, expect, it } from "vitest";

import { plainSnippet, snippetParts } from "./snippet";

describe("a search hit's snippet", () => {
  it("shows the words of Markdown, not its marks", () => {
    expect(plainSnippet("The **time** is `10:00` — see [the docs](https://e.test) and ![chart](https://e.test/c.png)\n## Next")).toBe(
      "The time is 10:00 — see the docs and chart Next",
    );
  });

  it("marks the words searched for, stemmed as the server matched them", () => {
    expect(snippetParts("Hello from a **phone** and more phones", "Phones")).toEqual([
      { text: "Hello from a ", match: false },
      { text: "phone", match: true },
      { text: " and more ", match: false },
      { text: "phones", match: true },
    ]);
    expect(snippetParts("nothing here", "")).toEqual([{ text: "nothing here", match: false }]);
    expect(snippetParts("a (b) c", "(b")).toEqual([{ text: "a (b) c", match: false }]);
  });
});
