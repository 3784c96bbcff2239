// @vitest-environment jsdom
import { describe, expect, it } from "vitest";

import { renderMarkdown } from "./markdown";

describe("markdown from the model", () => {
  it("renders formatting", () => {
    const html = renderMarkdown("**bold** and `code`\n\n- a\n- b");
    expect(html).toContain("<strong>bold</strong>");
    expect(html).toContain("<code>code</code>");
    expect(html).toContain("<li>a</li>");
  });

  it("removes scripts, event handlers and javascript: links", () => {
    const html = renderMarkdown(
      '<script>alert(1)</script><img src=x onerror="alert(2)">\n\n[click](javascript:alert(3))\n\n<iframe src="https://e.test"></iframe>',
    );
    expect(html).toContain("click");
    expect(html).not.toMatch(/<script|onerror|href="javascript:|<iframe/i);
  });

  it("opens links in a new tab without an opener", () => {
    const html = renderMarkdown("[docs](https://example.test/docs)");
    expect(html).toContain('target="_blank"');
    expect(html).toContain('rel="noopener noreferrer nofollow"');
  });
});
