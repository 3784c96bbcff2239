/**
 * The stored transcript as loaded so far. The API serves it newest page first; older pages are
 * fetched on request through `next_cursor` and go in front. A reload (a run ended, the feed came
 * back) fetches the newest page again and keeps the older pages already loaded.
 */

import type { Message } from "../api/client";

export interface TranscriptPage {
  items: Message[];
  next_cursor?: string | null;
}

export interface LoadedTranscript {
  /** Oldest first. */
  messages: Message[];
  /** Fetches the items before `messages[0]`; null once the chat's start is loaded. */
  older: string | null;
}

export const EMPTY: LoadedTranscript = { messages: [], older: null };

/** The newest page, as a fresh transcript. */
export function fromNewest(page: TranscriptPage): LoadedTranscript {
  return { messages: page.items, older: page.next_cursor ?? null };
}

/** An older page (fetched with `loaded.older`) put in front of what is loaded. */
export function withOlder(loaded: LoadedTranscript, page: TranscriptPage): LoadedTranscript {
  const have = new Set(loaded.messages.map((m) => m.id));
  return { messages: [...page.items.filter((m) => !have.has(m.id)), ...loaded.messages], older: page.next_cursor ?? null };
}

/**
 * The newest page fetched again, with the older items already loaded kept in front of it. When the
 * page does not reach back to what is loaded (many items arrived meanwhile), a gap would open
 * between them: start again from the new page instead.
 */
export function withNewest(loaded: LoadedTranscript, page: TranscriptPage): LoadedTranscript {
  const first = page.items[0];
  const at = first ? loaded.messages.findIndex((m) => m.id === first.id) : -1;
  if (at <= 0) return fromNewest(page);
  return { messages: [...loaded.messages.slice(0, at), ...page.items], older: loaded.older };
}
