import { describe, expect, it } from "vitest";

import { documentUrl } from "./openDocument";

const signed = "https://documents.s3.amazonaws.com/documents/o/d/manual.pdf?X-Amz-Signature=abc";

describe("documentUrl", () => {
  it("opens an inline PDF at the cited page", () => {
    expect(documentUrl({ url: signed, content_type: "application/pdf", disposition: "inline" }, 2)).toBe(`${signed}#page=2`);
  });

  it("opens a PDF without a cited page at its start", () => {
    expect(documentUrl({ url: signed, content_type: "application/pdf", disposition: "inline" }, null)).toBe(signed);
  });

  it("leaves anything but an inline PDF as signed (a page fragment means nothing there)", () => {
    expect(documentUrl({ url: signed, content_type: "image/png", disposition: "inline" }, 3)).toBe(signed);
    expect(documentUrl({ url: signed, content_type: "text/html", disposition: "attachment" }, 3)).toBe(signed);
  });

  it("replaces a fragment the URL already had", () => {
    expect(documentUrl({ url: `${signed}#x`, content_type: "application/pdf", disposition: "inline" }, 4)).toBe(`${signed}#page=4`);
  });
});
