/**
 * A search hit's snippet for the chat list: the Markdown marks taken out (the list shows text, not `**` and
 * backticks) and the words searched for marked. The server's full-text match stems words ("phones" finds
 * "phone"), so a word matches here by its stem at the start of a word too.
 */

export interface SnippetPart {
  text: string;
  match: boolean;
}

/** Markdown as the words it shows: links and images keep their text, emphasis, code and heading marks go. */
export function plainSnippet(markdown: string): string {
  return markdown
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/```[a-z0-9_+-]*/gi, " ")
    .replace(/(^|\s)#{1,6}\s+/g, "$1")
    .replace(/(^|\s)>\s+/g, "$1")
    .replace(/(^|\s)[-*+]\s+/g, "$1")
    .replace(/[*_~`]+/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

function stem(word: string): string {
  const w = word.toLowerCase();
  for (const end of ["ing", "ed", "es", "s"]) if (w.length - end.length >= 3 && w.endsWith(end)) return w.slice(0, -end.length);
  return w;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The snippet as plain text in parts, the words of `query` marked. */
export function snippetParts(snippet: string, query: string): SnippetPart[] {
  const text = plainSnippet(snippet);
  const stems = [...new Set((query.match(/[\p{L}\p{N}]{2,}/gu) ?? []).map(stem))];
  if (!stems.length) return [{ text, match: false }];
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(?:${stems.map(escapeRegExp).join("|")})[\\p{L}\\p{N}]*`, "giu");
  const parts: SnippetPart[] = [];
  let at = 0;
  for (const hit of text.matchAll(pattern)) {
    if (hit.index > at) parts.push({ text: text.slice(at, hit.index), match: false });
    parts.push({ text: hit[0], match: true });
    at = hit.index + hit[0].length;
  }
  if (at < text.length) parts.push({ text: text.slice(at), match: false });
  return parts;
}
