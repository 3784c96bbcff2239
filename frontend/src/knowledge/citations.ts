/** Citations under answers: the passages a `search_knowledge` call returned (from its result in the transcript),
 * attached to the assistant answer that follows the call in the same turn. */

import type { DisplayItem } from "../chat/transcript";

export const SEARCH_TOOL = "search_knowledge";

export interface Citation {
  chunkId: string;
  document: string;
  page: number | null;
  section: string | null;
  citation: string;
}

function passagesOf(value: unknown): unknown[] | null {
  if (Array.isArray(value)) return value;
  if (value && typeof value === "object") {
    const v = value as Record<string, unknown>;
    // A tool message may be stored as its content parts or wrapped in a return value.
    for (const key of ["return_value", "content", "items", "result"]) if (key in v) return passagesOf(v[key]);
  }
  if (typeof value === "string") {
    try {
      return passagesOf(JSON.parse(value));
    } catch {
      return null;
    }
  }
  return null;
}

/** The citations in a `search_knowledge` result (a JSON string live, parsed or text when stored); [] if none. */
export function parseCitations(result: unknown): Citation[] {
  const out: Citation[] = [];
  for (const p of passagesOf(result) ?? []) {
    if (!p || typeof p !== "object") continue;
    const r = p as Record<string, unknown>;
    if (typeof r.chunk_id !== "string") continue;
    const document = typeof r.document === "string" ? r.document : typeof r.filename === "string" ? r.filename : "document";
    out.push({
      chunkId: r.chunk_id,
      document,
      page: typeof r.page === "number" ? r.page : null,
      section: typeof r.section === "string" && r.section ? r.section : null,
      citation: typeof r.citation === "string" ? r.citation : document,
    });
  }
  return out;
}

/** "p. 3", "§ Travel", or "". */
export function whereIn(c: Pick<Citation, "page" | "section">): string {
  if (c.page) return `p. ${c.page}`;
  return c.section ? `§ ${c.section}` : "";
}

/** For each assistant answer, the passages cited by the `search_knowledge` calls of its turn before it (deduplicated,
 * in order). Only the turn's last answer after the calls gets them, so a long turn lists them once. */
export function citationsByAnswer(items: DisplayItem[]): Map<string, Citation[]> {
  const byAnswer = new Map<string, Citation[]>();
  let pending: Citation[] = [];
  let lastAnswer: string | null = null;
  const flush = () => {
    if (lastAnswer && pending.length) byAnswer.set(lastAnswer, pending);
  };
  for (const item of items) {
    if (item.kind === "user") {
      flush();
      pending = [];
      lastAnswer = null;
    } else if (item.kind === "tool" && item.name === SEARCH_TOOL) {
      if (lastAnswer) {
        flush(); // an answer between two searches keeps what came before it
        pending = [];
        lastAnswer = null;
      }
      for (const c of parseCitations(item.result)) if (!pending.some((p) => p.chunkId === c.chunkId)) pending.push(c);
    } else if (item.kind === "assistant" && pending.length) {
      lastAnswer = item.id;
    }
  }
  flush();
  return byAnswer;
}
