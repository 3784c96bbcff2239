import { describe, expect, it } from "vitest";

import { applyStatus, contentTypeOf, type DocumentStatusEvent, isPending, upsert } from "./documentStatus";
import type { KnowledgeDocument } from "./types";

const doc = (id: string, status: KnowledgeDocument["status"] = "uploading"): KnowledgeDocument => ({
  id,
  author_id: "u1",
  trusted: true,
  filename: `${id}.md`,
  content_type: "text/markdown",
  size: 10,
  collection: "org",
  classification: "standard",
  status,
  error: null,
  pages: null,
  chunk_count: 0,
  created_at: "2026-01-01T00:00:00Z",
  updated_at: "2026-01-01T00:00:00Z",
});

describe("document status from the feed", () => {
  it("applies an announcement to the listed document", () => {
    const event: DocumentStatusEvent = { document_id: "b", collection: "org", status: "ready", error: null, chunk_count: 4 };
    const { items, known } = applyStatus([doc("a"), doc("b", "processing")], event);
    expect(known).toBe(true);
    expect(items.map((d) => [d.id, d.status, d.chunk_count])).toEqual([
      ["a", "uploading", 0],
      ["b", "ready", 4],
    ]);
  });

  it("carries a failure's reason and says when the document is not listed", () => {
    const failed: DocumentStatusEvent = {
      document_id: "z",
      collection: "personal",
      status: "failed",
      error: { code: "encrypted_pdf", message: "The PDF is encrypted." },
      chunk_count: 0,
    };
    expect(applyStatus([doc("a")], failed).known).toBe(false);
    expect(applyStatus([doc("z")], failed).items[0]!.error?.message).toBe("The PDF is encrypted.");
  });

  it("upserts fresher copies in place and new ones first", () => {
    const list = upsert([doc("a"), doc("b")], doc("b", "ready"));
    expect(list.map((d) => d.status)).toEqual(["uploading", "ready"]);
    expect(upsert(list, doc("c")).map((d) => d.id)).toEqual(["c", "a", "b"]);
    expect([isPending("uploading"), isPending("processing"), isPending("ready"), isPending("failed")]).toEqual([true, true, false, false]);
  });

  it("types a Markdown file the browser left untyped", () => {
    expect(contentTypeOf({ name: "notes.MD", type: "" })).toBe("text/markdown");
    expect(contentTypeOf({ name: "a.txt", type: "text/plain" })).toBe("text/plain");
    // The formats of knowledge 2 (issue 36): a spreadsheet, a deck, an e-mail, a scan; a CSV whatever Windows calls it.
    expect(contentTypeOf({ name: "q3.xlsx", type: "" })).toBe(
      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    );
    expect(contentTypeOf({ name: "deck.pptx", type: "" })).toBe(
      "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    );
    expect(contentTypeOf({ name: "thread.eml", type: "" })).toBe("message/rfc822");
    expect(contentTypeOf({ name: "scan.JPG", type: "" })).toBe("image/jpeg");
    expect(contentTypeOf({ name: "rows.csv", type: "application/vnd.ms-excel" })).toBe("text/csv");
    expect(contentTypeOf({ name: "x.bin", type: "" })).toBe("application/octet-stream");
  });
});
