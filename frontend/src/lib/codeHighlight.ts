/**
 * Syntax highlighting for code blocks in answers: highlight.js's core and a handful of common languages, loaded
 * on first use (its own chunk, from 'self': within the CSP). It only adds classes to spans of text it escapes
 * itself; the colours are the app's (`MarkdownView`), for light and dark.
 */

import type { HLJSApi } from "highlight.js";

let loading: Promise<HLJSApi> | null = null;

function load(): Promise<HLJSApi> {
  loading ??= Promise.all([
    import("highlight.js/lib/core"),
    import("highlight.js/lib/languages/bash"),
    import("highlight.js/lib/languages/css"),
    import("highlight.js/lib/languages/go"),
    import("highlight.js/lib/languages/java"),
    import("highlight.js/lib/languages/javascript"),
    import("highlight.js/lib/languages/json"),
    import("highlight.js/lib/languages/python"),
    import("highlight.js/lib/languages/rust"),
    import("highlight.js/lib/languages/sql"),
    import("highlight.js/lib/languages/typescript"),
    import("highlight.js/lib/languages/xml"),
    import("highlight.js/lib/languages/yaml"),
  ]).then(([core, bash, css, go, java, javascript, json, python, rust, sql, typescript, xml, yaml]) => {
    const hljs = core.default;
    const languages = { bash, css, go, java, javascript, json, python, rust, sql, typescript, xml, yaml };
    for (const [name, module] of Object.entries(languages)) hljs.registerLanguage(name, module.default);
    hljs.registerAliases(["sh", "shell", "zsh"], { languageName: "bash" });
    hljs.registerAliases(["js", "jsx", "mjs"], { languageName: "javascript" });
    hljs.registerAliases(["ts", "tsx"], { languageName: "typescript" });
    hljs.registerAliases(["py"], { languageName: "python" });
    hljs.registerAliases(["html", "vue", "svg"], { languageName: "xml" });
    hljs.registerAliases(["yml"], { languageName: "yaml" });
    hljs.configure({ ignoreUnescapedHTML: true });
    return hljs;
  });
  return loading;
}

/** The language a fenced block names (`language-py` → `py`), or null. */
export function blockLanguage(code: Element): string | null {
  for (const name of code.classList) if (name.startsWith("language-")) return name.slice(9) || null;
  return null;
}

/** Highlight the fenced code blocks under `root` whose language is known (others stay plain text). */
export async function highlightCode(root: HTMLElement): Promise<void> {
  const blocks = [...root.querySelectorAll<HTMLElement>("pre > code")].filter((c) => c.dataset.highlighted !== "yes");
  if (!blocks.length) return;
  const hljs = await load();
  for (const code of blocks) {
    const language = blockLanguage(code);
    if (!code.isConnected || !language || !hljs.getLanguage(language)) continue;
    hljs.highlightElement(code);
  }
}
